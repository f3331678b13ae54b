#pragma once
// What the generated wrappers need from a library (codegen/spelling/cpp.py): the conversion
// helpers in <library>::torch_utils (this library's op takes only types passed as they are, so it
// needs none) and <library>::OpScope, which each wrapper opens with the op's name.

namespace tiny_ops {

struct OpScope {
  explicit OpScope(const char* /*op*/) {}
};

}  // namespace tiny_ops
