// CheckCard: the checks of a workload card that need the catalog and the twin's knob
// table (card/ validates everything else while parsing). `card check` runs it, and so does
// every command that loads a card (cli::LoadCard), so a card `card check` passes is never
// rejected later for a name or a knob, and every error reads "FILE:LINE: path: what".
//
//  - model.architecture, when set: a catalog name, a HF id, or a readable config.json;
//  - deployment.accelerator, when set, and every constraints.accelerators entry: catalog
//    accelerators;
//  - the engine: map: every knob known, every value valid for it (twin/engine_config.h),
//    and the cluster knobs consistent.
// What one command needs beyond this (an architecture at all, an accelerator) stays that
// command's check: a card for `bench` against a remote server needs neither.
#pragma once

#include "card/card.h"
#include "catalog/catalog.h"
#include "core/status.h"

namespace infereng::twin {

Status CheckCard(const card::WorkloadCard& card, const catalog::Catalog& catalog);

}  // namespace infereng::twin
