// Collective latency: what one small all-reduce costs before its bytes move, NCCL-style.
//
//   latency(n) = launch + hops(n) x per_hop
//
// launch: the fixed cost of one collective call (kernel launch, handshakes, the protocol's
// base latency); per_hop: one step between neighbouring ranks over the link. hops(n) for
// an all-reduce over n ranks: a ring takes 2(n-1) steps (reduce-scatter then all-gather);
// a tree 2 ceil(log2 n) (reduce up, broadcast down). Within one NVLink node NCCL's own
// tuning model charges the tree 2(n-1) intra-node steps too, so a ring is used up to 8
// ranks (one node) and a tree beyond, where the tree's log2 term is the point.
//
// Defaults: the per-hop figure (the accelerator catalog's interconnect_latency) is NCCL's
// latency model for the LL protocol on NVLink, 0.6 us per ring step; the launch
// (fit::Efficiency::collective_launch_s) is 20 us, NCCL's 6.6 us base raised to what an
// engine's decode all-reduce costs as published rows show it (data/README.md, "Collective
// latency", gives both sources and the fit): 21.2 us at TP2, 23.6 us at TP4, 28.4 us at TP8.
//
// Thread-safety: pure functions.
#pragma once

namespace infereng::fit {

// Ranks up to which the ring is used (one NVLink/NVSwitch node).
inline constexpr int kRingMaxRanks = 8;

// Latency steps of one all-reduce over `ranks` (0 for one rank).
double AllReduceHops(int ranks);

// Seconds of latency of one all-reduce over `ranks` (0 for one rank).
double AllReduceLatencySeconds(int ranks, double launch_s, double per_hop_s);

}  // namespace infereng::fit
