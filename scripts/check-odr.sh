#!/usr/bin/env bash
# Fails when two headers define a type of the same name in the same namespace.
#
# Why: the linker keeps one definition per name (the One Definition Rule) and says nothing when
# two differ; a vector<Evidence> built with one layout and moved with the other corrupted the
# stack under ASan (probe's Evidence vs diagnose's, 2026-12). Release builds ran "fine".
# Scope: top-level types (a line starting with struct/class/enum) in src/**/*.h, keyed by the
# header's first `namespace` line. Forward declarations (ending in ';') are not definitions.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
dups=$(find "$root/src" -name '*.h' -print0 | xargs -0 awk '
  FNR == 1 { ns = "" }
  ns == "" && /^namespace [A-Za-z_:]+ \{/ { ns = $2 }
  /^(struct|class|enum class|enum) [A-Za-z_][A-Za-z0-9_]*( |$|\{|:)/ && !/;[[:space:]]*$/ && !/^[a-z ]+ [A-Za-z0-9_]+::/ {
    name = ($1 == "enum" && $2 == "class") ? $3 : $2
    sub(/[{:].*/, "", name)
    print ns "::" name "\t" FILENAME
  }' | sort | awk -F'\t' '{ if ($1 == prev) { print prevline; print } prev = $1; prevline = $0 }' | sort -u)
if [[ -n "$dups" ]]; then
  echo "check-odr: the same type name is defined twice in one namespace (rename one):" >&2
  echo "$dups" | sed "s|$root/||" >&2
  exit 1
fi
echo "check-odr: no type defined twice in one namespace"
