#pragma once
// Errors that name the op and the argument.
//
// Generated wrappers open an OpScope with the op's name; implementation code
// reports bad input with DG_CHECK_ARG(cond, "arg", message...).  The resulting
// Python exception reads  "<op>: argument '<arg>' <message>".  Implementations
// never learn how they were registered: they only read the current op name.

#include <ATen/core/LegacyTypeDispatch.h>
#include <c10/util/Exception.h>

#include <string>

namespace deep_gemm {

inline thread_local const char* current_op_name = nullptr;

// The lifetime of one op call, opened first thing by every generated wrapper:
// it names the op running on this thread (for errors), and it runs the
// implementation below autograd.
//
// Note [Kernels run below autograd]
// No op registers an autograd kernel (none is differentiable), so the
// dispatcher reaches the CPU/CUDA kernel through autograd's fallback, which
// does not exclude the autograd keys.  Without the guard, the ATen calls inside
// an implementation would record history: a returned tensor would come back
// with requires_grad=True and a grad_fn made of the kernel's internals (a
// silently made-up gradient), and `d.copy_(...)` into an output would fail on a
// leaf that requires grad.  In-place writes still bump version counters (the
// ADInplaceOrView key stays on).  See tests/ops/test_opcheck.py.
class OpScope {
 public:
  explicit OpScope(const char* name) : previous_(current_op_name) { current_op_name = name; }
  ~OpScope() { current_op_name = previous_; }
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;

 private:
  const char* previous_;
  at::AutoDispatchBelowAutograd below_autograd_;
};

inline std::string op_prefix() { return std::string(current_op_name ? current_op_name : "deep_gemm") + ": "; }

// Bad value, shape, dtype, device or layout of one argument -> Python ValueError.
[[noreturn]] inline void fail_argument(const char* arg, const std::string& what) {
  TORCH_CHECK_VALUE(false, op_prefix(), "argument '", arg, "' ", what);
  __builtin_unreachable();
}

// A valid request this build cannot serve -> Python RuntimeError.
[[noreturn]] inline void fail_unsupported(const std::string& what) {
  TORCH_CHECK(false, op_prefix(), what);
  __builtin_unreachable();
}

inline bool names_current_op(const c10::Error& e) { return e.msg().rfind(op_prefix(), 0) == 0; }

// Runs `body` and gives any ATen error raised inside it the op's name.  For ops whose arguments
// size what they allocate (a logits row of max_context_len, a schedule of num_sms rows): the
// arguments can be valid yet too large for the device, and the allocator's error says nothing of
// the op.  Errors the op raised itself pass through unchanged; out of memory stays OutOfMemoryError.
template <typename Body>
decltype(auto) naming_errors(Body&& body) {
  try {
    return body();
  } catch (const c10::OutOfMemoryError& e) {
    if (names_current_op(e)) throw;
    TORCH_CHECK_WITH(OutOfMemoryError, false, op_prefix(), e.msg());
    __builtin_unreachable();
  } catch (const c10::Error& e) {
    if (names_current_op(e)) throw;
    fail_unsupported(e.msg());
  }
}

}  // namespace deep_gemm

#define DG_CHECK_ARG(cond, arg, ...)                              \
  do {                                                            \
    if (C10_UNLIKELY(!(cond))) {                                  \
      ::deep_gemm::fail_argument((arg), ::c10::str(__VA_ARGS__)); \
    }                                                             \
  } while (0)

#define DG_CHECK_SUPPORTED(cond, ...)                         \
  do {                                                        \
    if (C10_UNLIKELY(!(cond))) {                              \
      ::deep_gemm::fail_unsupported(::c10::str(__VA_ARGS__)); \
    }                                                         \
  } while (0)
