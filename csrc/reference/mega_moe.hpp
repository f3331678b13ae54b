#pragma once
// Mega MoE, reference (ATen) implementation: the per-rank work of one call.  Over 400
// lines: the one-rank, collective and symmetric-memory paths share every step but the exchange.
//
// Note [Mega MoE across ranks]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// Upstream runs dispatch, both GEMMs, SwiGLU and combine in one kernel that
// writes straight into the peers' symmetric buffers.  A TORCH_LIBRARY op has no
// process group and cannot run collectives, so the work is split along the one
// line where data must cross ranks:
//
//   1. dispatch   each (token, slot) with an expert >= 0 becomes one row in the
//                 receive region (l1_token, l1_sf, recv_info, recv_weights) of
//                 the rank owning the expert, rows ordered by (source rank,
//                 token, slot); workspace[0] = the row count.
//   2. experts    (this op) every received row runs its local expert: L1 GEMM,
//                 SwiGLU with clamp and top-k weight, FP8 requantisation
//                 (per-32 UE8M0 scales), L2 GEMM -> l2_out; the per-expert row
//                 counts are added to cumulative_local_expert_recv_stats.
//   3. combine    each l2_out row returns to combine[slot, token] on its
//                 source rank, which sums its slots into y.
//
// Who moves the rows depends on sym_buffer_ptrs:
//   - one entry: the op does all three steps itself; it is the whole of Mega
//     MoE and needs no process group.
//   - the peers' buffer addresses (CUDA symmetric memory): the op does all
//     three steps too, writing straight into the peers' buffers; see Note
//     [Mega MoE on symmetric memory].
//   - zeros (gloo on the CPU, or CUDA without symmetric memory): the op does
//     step 2 only, on the rows the caller dispatched into its buffer, and leaves
//     y alone.  deep_gemm.mega's wrapper runs steps 1 and 3 with the group's
//     collectives (all_to_all_single) and finishes with
//     _sum_combined_for_mega_moe, the same summation the other paths use.
// Every path orders the received rows by (source rank, token, slot), so all
// three give the same bits.
//
// Numerics (the tests mirror them step by step and compare bitwise):
//   L1 = x . W1^T           float64 products and sums, rounded to float32, then bf16
//   gate, up = L1[:, :I], L1[:, I:]  (after undoing the gate/up interleave)
//   up = clamp(up, -c, c), gate = min(gate, c)   (no clamp when c is None)
//   h = (gate / (1 + exp(-gate))) * up * w       float64, rounded to float32
//   FP8: per 32 columns sf = pow2ceil(max(amax(|h|), 1e-4) / 448) (float32),
//        q = e4m3(h * (1 / sf));  bf16: q = bf16(h)
//   L2 = deq(q) . W2^T      float64, rounded to float32, then bf16
//   y = sum over the token's used slots, in slot order, of L2 (float32, from +0), rounded to bf16
// FP8 x FP4 products with power-of-two scales are sums of values with a few
// significant bits, so the float64 sums are exact and the result does not
// depend on summation order or on how rows are batched across ranks.
// fast_math (fast exp / reciprocal on GPUs) has no effect here.

#include <ATen/ATen.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "reference/mega_layout.hpp"
#include "reference/quant.hpp"
#include "utils/checks.hpp"

#ifdef DG_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

#include "cuda/mega_dequant.h"
#include "cuda/symm_barrier.h"
#endif

namespace deep_gemm::mega {

// How long a rank waits at the symmetric-memory barrier for a peer (Note [Mega MoE on symmetric memory]).
inline constexpr int64_t kBarrierTimeoutNs = 60'000'000'000;

// The validated shape of one fused call.
struct MoeCall {
  SymmBufferLayout layout;
  int64_t num_ranks = 1;
  int64_t rank = 0;
  int64_t num_experts = 0;
  int64_t experts_per_rank = 0;
  int64_t num_tokens = 0;  // T = y.size(0)
  std::optional<float> clamp;
  std::vector<int64_t> peers;  // every rank's buffer address (symmetric memory), or empty
};

namespace detail {

// (row, col) of the first true entry of a 2-D mask (a host read, for error messages).
inline std::pair<int64_t, int64_t> first_true(const at::Tensor& mask) {
  const auto at = mask.nonzero()[0].cpu();
  return {at[0].item<int64_t>(), at[1].item<int64_t>()};
}

// Row permutations undoing transform_weights_for_mega_moe (deep_gemm.mega).
// Interleaved row 16c + 8g + j held row g * I + 8c + j of [gate | up].
inline at::Tensor undo_gate_up_interleave(const at::Tensor& w) {
  const int64_t rows = w.size(0), cols = w.size(1);
  return w.reshape({rows / 16, 2, 8, cols}).transpose(0, 1).reshape({rows, cols});
}

// Within each 128-row block, row 4j + i held row 32i + j.
inline at::Tensor undo_utccp_transpose(const at::Tensor& sf) {
  const int64_t rows = sf.size(0), cols = sf.size(1);
  return sf.reshape({rows / 128, 32, 4, cols}).transpose(1, 2).reshape({rows, cols});
}

// Packed UE8M0 scales [rows, k / 128] (gran 32) -> float64 per element [rows, k].
inline at::Tensor expand_ue8m0(const at::Tensor& packed, int64_t k) {
  return quant::unpack_ue8m0(packed).repeat_interleave(kSfGranK, 1).narrow(1, 0, k).to(at::kDouble);
}

// FP4 weights of one expert [rows, k / 2] with scales [rows, k / 128] -> float64 [rows, k].
inline at::Tensor dequant_fp4(const at::Tensor& data, const at::Tensor& packed_sf) {
#ifdef DG_WITH_CUDA
  // Every call re-reads every local expert's weights: one pass instead of a dozen elementwise ops.
  if (data.is_cuda()) {
    const auto d = data.contiguous(), sf = packed_sf.contiguous();
    TORCH_CHECK(d.dim() == 2 && d.scalar_type() == at::kChar && sf.scalar_type() == at::kInt && sf.dim() == 2 &&
                    sf.size(0) == d.size(0) && sf.size(1) * 128 >= 2 * d.size(1),
                "dequant_fp4: expected int8 data [rows, k / 2] and int32 scales [rows, k / 128]");
    const c10::cuda::CUDAGuard guard(d.device());
    auto out = at::empty({d.size(0), 2 * d.size(1)}, d.options().dtype(at::kDouble));
    C10_CUDA_CHECK(cuda::dequant_fp4_f64(reinterpret_cast<const uint8_t*>(d.data_ptr()),
                                         reinterpret_cast<const uint8_t*>(sf.data_ptr()), d.size(0), d.size(1),
                                         sf.size(1) * 4, out.data_ptr<double>(), at::cuda::getCurrentCUDAStream()));
    return out;
  }
#endif
  const auto values = quant::unpack_fp4(data).to(at::kDouble);
  return values * expand_ue8m0(packed_sf, values.size(1));
}

// The smallest power of two >= v (float32 bit arithmetic; exponent kept in the normal range).
inline at::Tensor pow2_ceil(const at::Tensor& v) {
  const auto bits = v.contiguous().view(at::kInt);
  auto exponent = at::bitwise_and(at::bitwise_right_shift(bits, 23), 0xFF);
  exponent = exponent + (at::bitwise_and(bits, 0x7FFFFF) != 0).to(at::kInt);
  return at::bitwise_left_shift(exponent.clamp(1, 254), 23).view(at::kFloat);
}

// float32 accumulation of an expert GEMM result computed in float64, rounded as the kernels round.
inline at::Tensor to_bf16(const at::Tensor& f64) { return f64.to(at::kFloat).to(at::kBFloat16); }

// ATen's CPU gather/scatter kernels skip float8, so token rows move as bytes.
inline at::Tensor bytes(const at::Tensor& t) { return t.scalar_type() == at::kFloat8_e4m3fn ? t.view(at::kByte) : t; }

inline at::Tensor gather_rows(const at::Tensor& t, const at::Tensor& rows) {
  return bytes(t).index_select(0, rows).view(t.scalar_type());
}

}  // namespace detail

// Staged routing topk_idx[:T] (read from the buffer): every entry in [-1, E),
// and no expert twice for one token.
inline void check_staged_routing(const at::Tensor& topk_idx, int64_t num_experts) {
  if (topk_idx.numel() == 0) return;
  const auto bad = (topk_idx < -1) | (topk_idx >= num_experts);
  if (bad.any().item<bool>()) {
    const auto [t, k] = detail::first_true(bad);
    fail_argument("sym_buffer", c10::str("stages topk_idx[", t, ", ", k, "] = ", topk_idx[t][k].item<int64_t>(),
                                         ", outside [-1, num_experts = ", num_experts, ")"));
  }
  const int64_t K = topk_idx.size(1);
  if (K < 2) return;
  const auto sorted = std::get<0>(topk_idx.sort(1));
  const auto next = sorted.narrow(1, 1, K - 1);
  const auto dup = (next == sorted.narrow(1, 0, K - 1)) & (next >= 0);
  if (dup.any().item<bool>()) {
    const auto [t, k] = detail::first_true(dup);
    fail_argument("sym_buffer", c10::str("stages token ", t, " with expert ", next[t][k].item<int64_t>(),
                                         " twice in topk_idx; a token picks distinct experts"));
  }
}

// The receive region a caller filled (more than one rank): the row count and
// every recv_info field in range.
inline void check_received_rows(const MoeCall& call, const at::Tensor& buffer) {
  const auto& L = call.layout;
  const int64_t n = L.view(buffer, Region::kWorkspace)[kWsRecvRows].item<int64_t>();
  DG_CHECK_ARG(n >= 0 && n <= L.config.num_ring_tokens, "sym_buffer", "holds ", n,
               " received rows in workspace[0]; expected 0 to the receive capacity ", L.config.num_ring_tokens);
  if (n == 0) return;
  const auto info = L.view(buffer, Region::kRecvInfo).narrow(0, 0, n);
  const int64_t limits[kRecvInfoFields] = {call.num_ranks, L.config.num_max_tokens_per_rank, L.config.num_topk,
                                           call.experts_per_rank};
  const char* names[kRecvInfoFields] = {"source rank", "source token", "slot", "local expert"};
  for (int64_t f = 0; f < kRecvInfoFields; ++f) {
    const auto col = info.select(1, f);
    const auto bad = (col < 0) | (col >= limits[f]);
    if (bad.any().item<bool>()) {
      const int64_t row = bad.nonzero()[0][0].item<int64_t>();
      fail_argument("sym_buffer", c10::str("holds received row ", row, " with ", names[f], " ",
                                           col[row].item<int64_t>(), ", outside [0, ", limits[f], ")"));
    }
  }
}

// Step 1 on one rank: the staged tokens become received rows (see the Note).
// The staged rows (tok, slot) of `source` become received rows [offset, offset + n) of
// `dest`, from source rank `rank`, for dest's local experts `local_expert`.  `dest` is
// `source` itself on one rank, a peer's buffer on symmetric memory.
inline void put_received_rows(const SymmBufferLayout& L, const at::Tensor& source, const at::Tensor& dest,
                              int64_t offset, int64_t rank, const at::Tensor& tok, const at::Tensor& slot,
                              const at::Tensor& local_expert) {
  const int64_t n = tok.size(0);
  detail::bytes(L.view(dest, Region::kL1Token).narrow(0, offset, n))
      .copy_(detail::bytes(detail::gather_rows(L.view(source, Region::kX), tok)));
  if (L.config.with_sf()) {
    L.view(dest, Region::kL1Sf).narrow(0, offset, n).copy_(L.view(source, Region::kXSf).index_select(0, tok));
  }
  const auto info = at::stack({at::full_like(tok, rank), tok, slot, local_expert}, 1);
  L.view(dest, Region::kRecvInfo).narrow(0, offset, n).copy_(info);
  L.view(dest, Region::kRecvWeights)
      .narrow(0, offset, n)
      .copy_(L.view(source, Region::kTopkWeights).index({tok, slot}));
}

// Expert outputs `out` of the received rows `info` go to combine[slot, token] of `dest`,
// the buffer of the rows' source rank.
inline void put_outputs(const SymmBufferLayout& L, const at::Tensor& dest, const at::Tensor& info,
                        const at::Tensor& out) {
  L.view(dest, Region::kCombine).index_put_({info.select(1, 2).to(at::kLong), info.select(1, 1).to(at::kLong)}, out);
}

// Step 1 on one rank: the staged tokens become received rows (see the Note).
inline void dispatch_locally(const MoeCall& call, const at::Tensor& buffer) {
  const auto& L = call.layout;
  const auto idx = L.view(buffer, Region::kTopkIdx).narrow(0, 0, call.num_tokens);
  const auto pos = (idx >= 0).nonzero();  // [n, 2] in (token, slot) order
  const int64_t n = pos.size(0);
  L.view(buffer, Region::kWorkspace)[kWsRecvRows].fill_(n);
  if (n == 0) return;
  const auto tok = pos.select(1, 0), slot = pos.select(1, 1);
  put_received_rows(L, buffer, buffer, 0, 0, tok, slot, idx.index({tok, slot}));
}

// Step 2: every received row through its local expert.  l1/l2 are (data, sf)
// pairs (sf undefined for bf16), in the layout transform_weights_for_mega_moe makes.
inline void run_local_experts(const MoeCall& call, const at::Tensor& buffer,
                              const std::pair<at::Tensor, at::Tensor>& l1, const std::pair<at::Tensor, at::Tensor>& l2,
                              const std::optional<at::Tensor>& recv_stats) {
  const auto& L = call.layout;
  const bool fp8 = L.config.with_sf();
  const int64_t H = L.config.hidden, I = L.config.intermediate_hidden;
  const int64_t n = L.view(buffer, Region::kWorkspace)[kWsRecvRows].item<int64_t>();
  const auto info = L.view(buffer, Region::kRecvInfo).narrow(0, 0, n);
  const auto local_expert = info.select(1, 3);
  const auto rows_per_expert = at::bincount(local_expert, {}, call.experts_per_rank);
  if (recv_stats.has_value() && n > 0) recv_stats->add_(rows_per_expert.to(recv_stats->scalar_type()));
  // The rows of expert e are order[first_e, first_e + count_e): one host read for all experts.
  const auto order = at::argsort(local_expert, /*stable=*/true);
  const auto counts = rows_per_expert.cpu();
  const auto rows_x = L.view(buffer, Region::kL1Token).narrow(0, 0, n);
  const auto weights = L.view(buffer, Region::kRecvWeights).narrow(0, 0, n);
  const auto l2_token = L.view(buffer, Region::kL2Token), l2_out = L.view(buffer, Region::kL2Out);
  int64_t first = 0;
  for (int64_t e = 0; e < call.experts_per_rank && n > 0; ++e) {
    const int64_t count = counts.const_data_ptr<int64_t>()[e];
    if (count == 0) continue;
    const auto sel = order.narrow(0, first, count);
    first += count;
    // L1: [rows, 2I] as [gate | up].
    at::Tensor x, w1;
    if (fp8) {
      const auto x_sf = L.view(buffer, Region::kL1Sf).index_select(0, sel);
      x = detail::gather_rows(rows_x, sel).to(at::kDouble) * detail::expand_ue8m0(x_sf, H);
      w1 = detail::dequant_fp4(detail::undo_gate_up_interleave(l1.first[e]),
                               detail::undo_gate_up_interleave(detail::undo_utccp_transpose(l1.second[e])));
    } else {
      x = rows_x.index_select(0, sel).to(at::kDouble);
      w1 = detail::undo_gate_up_interleave(l1.first[e]).to(at::kDouble);
    }
    const auto act = detail::to_bf16(at::matmul(x, w1.t())).to(at::kDouble);
    auto gate = act.narrow(1, 0, I), up = act.narrow(1, I, I);
    if (call.clamp.has_value()) {
      const double c = *call.clamp;
      up = up.clamp(-c, c);
      gate = gate.clamp_max(c);
    }
    const auto h =
        (gate / (1 + at::exp(-gate)) * up * weights.index_select(0, sel).to(at::kDouble).unsqueeze(1)).to(at::kFloat);
    // L2 input: FP8 with per-32 UE8M0 scales, or bf16.
    at::Tensor h_deq;
    if (fp8) {
      const int64_t rows = h.size(0);
      const auto groups = h.view({rows, I / kSfGranK, kSfGranK});
      const auto sf = detail::pow2_ceil(groups.abs().amax(2).clamp_min(1e-4f) / 448.0f);
      const auto q = (groups * sf.reciprocal().unsqueeze(2)).to(at::kFloat8_e4m3fn).view({rows, I});
      detail::bytes(l2_token).index_copy_(0, sel, detail::bytes(q));
      L.view(buffer, Region::kL2Sf).index_copy_(0, sel, quant::pack_ue8m0_last_dim(sf));
      h_deq = q.to(at::kDouble) * sf.repeat_interleave(kSfGranK, 1).to(at::kDouble);
    } else {
      const auto q = h.to(at::kBFloat16);
      l2_token.index_copy_(0, sel, q);
      h_deq = q.to(at::kDouble);
    }
    const auto w2 = fp8 ? detail::dequant_fp4(l2.first[e], detail::undo_utccp_transpose(l2.second[e]))
                        : l2.first[e].to(at::kDouble);
    l2_out.index_copy_(0, sel, detail::to_bf16(at::matmul(h_deq, w2.t())));
  }
}

// y[t] = sum over used slots k (topk_idx[t, k] >= 0), in slot order, of combine[k, t];
// float32 from +0, rounded once to y's bf16.
inline void sum_combined(const at::Tensor& y, const at::Tensor& combine, const at::Tensor& topk_idx) {
  const int64_t T = y.size(0);
  if (y.numel() == 0) return;
  auto acc = at::zeros({T, y.size(1)}, y.options().dtype(at::kFloat));
  for (int64_t k = 0; k < combine.size(0); ++k) {
    const auto used = (topk_idx.narrow(0, 0, T).select(1, k) >= 0).unsqueeze(1);
    acc.add_(at::where(used, combine[k].narrow(0, 0, T).to(at::kFloat), 0.0f));
  }
  y.copy_(acc);
}

// Step 3 on one rank: l2_out rows to combine[slot, token], then the sum into y.
inline void combine_locally(const MoeCall& call, const at::Tensor& buffer, const at::Tensor& y) {
  const auto& L = call.layout;
  const int64_t n = L.view(buffer, Region::kWorkspace)[kWsRecvRows].item<int64_t>();
  if (n > 0) {
    put_outputs(L, buffer, L.view(buffer, Region::kRecvInfo).narrow(0, 0, n),
                L.view(buffer, Region::kL2Out).narrow(0, 0, n));
  }
  sum_combined(y, L.view(buffer, Region::kCombine), L.view(buffer, Region::kTopkIdx));
}

// Note [Mega MoE on symmetric memory]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// With CUDA symmetric memory every rank's buffer is mapped into every rank's
// address space, and sym_buffer_ptrs holds their addresses (rank r's at index
// r).  One call then runs the three steps of Note [Mega MoE across ranks] on the
// current stream with no collective library, separated by the device barrier
// of csrc/cuda/symm_barrier.h (its state lives in the workspace):
//
//   counts     rank s writes how many rows it sends to each rank d into row s
//              of the count matrix of every rank's workspace        -> barrier
//   dispatch   each rank reads the matrix (one host sync), and writes its rows
//              for rank d at offset sum_{s < own rank} counts[s][d] of d's
//              receive region, so d sees them ordered by (source rank, token,
//              slot) as on the other paths; then sets its own row count -> barrier
//   experts    step 2 on the rows in its own buffer
//   combine    writes each output row into combine[slot, token] of the source
//              rank's buffer                                          -> barrier
//   sum        its own combine region into y
//
// The barriers also keep consecutive calls apart: a rank writes into a peer's
// buffer only after that peer has passed the barrier that ends its reads of the
// previous call.  A rank whose call fails on the host (bad weights, say)
// writes 1 + its rank into every rank's timeout word (deep_gemm.mega does,
// through the mapping, at the index _get_workspace_words_for_mega_moe
// returns), which ends the peers' waits at once; a rank that is never
// called stops the others after kBarrierTimeoutNs.  Either way every rank
// raises an error naming the missing rank, the barrier state is out of step,
// and the SymmBuffer must be rebuilt, which every later call on it reports.

namespace detail {

// A peer's buffer, as a tensor on this rank's device: the address is mapped here, though
// CUDA reports the peer's device as the memory's owner, so the device is stated.
inline at::Tensor peer_buffer(int64_t address, const at::Tensor& own) {
  return at::for_blob(reinterpret_cast<void*>(address), {own.numel()})
      .options(own.options())
      .target_device(own.device())
      .make_tensor();
}

inline void check_no_timeout(const MoeCall& call, int64_t timed_out, const char* step) {
  if (timed_out == 0) return;
  fail_unsupported(c10::str("rank ", call.rank, " stopped waiting for rank ", timed_out - 1,
                            " at the Mega MoE barrier (", step, "): that rank's call failed or was not made within ",
                            kBarrierTimeoutNs / 1000000000,
                            " s. The symmetric buffers' barrier state is now out of step: rebuild the SymmBuffer "
                            "on every rank"));
}

}  // namespace detail

#ifdef DG_WITH_CUDA
// The workspace holds signals and counts for kMaxRanks ranks; the barrier must cover as many.
static_assert(cuda::kMaxBarrierRanks >= kMaxRanks, "the Mega MoE barrier covers fewer ranks than the workspace");

inline void run_on_symmetric_memory(const MoeCall& call, const at::Tensor& buffer, const at::Tensor& y,
                                    const std::pair<at::Tensor, at::Tensor>& l1,
                                    const std::pair<at::Tensor, at::Tensor>& l2,
                                    const std::optional<at::Tensor>& recv_stats) {
  const auto& L = call.layout;
  const int64_t R = call.num_ranks, me = call.rank, E_l = call.experts_per_rank;
  std::vector<at::Tensor> peers;
  std::vector<int64_t> workspaces;
  for (int64_t r = 0; r < R; ++r) {
    peers.push_back(r == me ? buffer : detail::peer_buffer(call.peers[r], buffer));
    workspaces.push_back(reinterpret_cast<int64_t>(L.view(peers.back(), Region::kWorkspace).data_ptr()));
  }
  const auto own_ws = L.view(buffer, Region::kWorkspace);
  const cuda::BarrierWords words{kWsEpoch, kWsTimeout, kWsSignals};
  auto barrier = [&] {
    C10_CUDA_CHECK(cuda::symm_barrier(workspaces.data(), static_cast<int>(workspaces.size()), static_cast<int>(me),
                                      words, kBarrierTimeoutNs, at::cuda::getCurrentCUDAStream()));
  };

  // counts: the used (token, slot) pairs, ordered by destination rank, then (token, slot).
  const auto idx = L.view(buffer, Region::kTopkIdx).narrow(0, 0, call.num_tokens);
  const auto pos = (idx >= 0).nonzero();
  const auto unordered_expert = idx.index({pos.select(1, 0), pos.select(1, 1)});
  const auto order = at::argsort(at::floor_divide(unordered_expert, E_l), /*stable=*/true);
  const auto tok = pos.select(1, 0).index_select(0, order), slot = pos.select(1, 1).index_select(0, order);
  const auto expert = unordered_expert.index_select(0, order);
  const auto counts = at::bincount(at::floor_divide(expert, E_l), {}, R);
  for (int64_t d = 0; d < R; ++d) {
    L.view(peers[d], Region::kWorkspace).narrow(0, kWsCounts + me * kMaxRanks, R).copy_(counts);
  }
  barrier();

  // dispatch
  const auto header = own_ws.narrow(0, 0, kWsCounts + R * kMaxRanks).cpu();
  const auto* h = header.const_data_ptr<int64_t>();
  detail::check_no_timeout(call, h[kWsTimeout], "after counting");
  auto sent = [&](int64_t s, int64_t d) { return h[kWsCounts + s * kMaxRanks + d]; };
  int64_t received = 0;
  for (int64_t s = 0; s < R; ++s) received += sent(s, me);
  TORCH_CHECK(received <= L.config.num_ring_tokens, "Mega MoE: ", received, " rows reached rank ", me,
              ", more than its receive capacity ", L.config.num_ring_tokens);
  int64_t first = 0;
  for (int64_t d = 0; d < R; ++d) {
    const int64_t c = sent(me, d);
    if (c == 0) continue;
    int64_t offset = 0;
    for (int64_t s = 0; s < me; ++s) offset += sent(s, d);
    put_received_rows(L, buffer, peers[d], offset, me, tok.narrow(0, first, c), slot.narrow(0, first, c),
                      expert.narrow(0, first, c) - d * E_l);
    first += c;
  }
  own_ws[kWsRecvRows].fill_(received);
  barrier();

  // experts
  run_local_experts(call, buffer, l1, l2, recv_stats);

  // combine
  const auto info = L.view(buffer, Region::kRecvInfo), l2_out = L.view(buffer, Region::kL2Out);
  int64_t row = 0;
  for (int64_t s = 0; s < R; ++s) {
    const int64_t c = sent(s, me);
    if (c == 0) continue;
    put_outputs(L, peers[s], info.narrow(0, row, c), l2_out.narrow(0, row, c));
    row += c;
  }
  barrier();

  sum_combined(y, L.view(buffer, Region::kCombine), L.view(buffer, Region::kTopkIdx));
  detail::check_no_timeout(call, own_ws[kWsTimeout].item<int64_t>(), "after dispatch or combine");
}
#endif

}  // namespace deep_gemm::mega
