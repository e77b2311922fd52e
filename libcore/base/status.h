// Status: the error type every fallible libcore call returns.
// Errors carry a stable CANN-style code (see error_catalogue.cc), the parameter or file concerned,
// the offending value, why it is wrong and what to do about it.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace npu {

class Status {
 public:
  Status() = default;  // OK
  static Status Ok() { return {}; }
  // code: catalogue code such as "E10001". fix: empty means the catalogue's default solution.
  static Status Error(std::string_view code, std::string param, std::string value, std::string reason,
                      std::string fix = {});

  bool ok() const { return !err_; }
  explicit operator bool() const { return ok(); }
  const std::string& code() const;
  const std::string& param() const;
  const std::string& reason() const;
  // Full user-facing text: "E10001: Value [v] for parameter [p] is invalid. Reason: ...\n  Solution: ..."
  std::string message() const;
  // Prefixes the reason with context (e.g. the node being imported) while keeping the code.
  Status& with_context(std::string_view ctx);
  // Appends a sentence to the reason (e.g. a second tool's view of the same input).
  Status& with_note(std::string_view note);
  // Renames the parameter to the one the user typed (the .om reader says --om; msame's flag is --model).
  Status& with_param(std::string_view param);

 private:
  struct Err {
    std::string code, param, value, reason, fix;
  };
  std::shared_ptr<Err> err_;
};

// Result<T>: a value or the Status explaining why there is none.
template <class T>
class Result {
 public:
  Result(T v) : v_(std::move(v)) {}
  Result(Status s) : v_(std::move(s)) {}
  bool ok() const { return v_.index() == 0; }
  T& value() & { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  const T& value() const& { return std::get<0>(v_); }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }
  Status status() const { return ok() ? Status::Ok() : std::get<1>(v_); }

 private:
  std::variant<T, Status> v_;
};

// Catalogue entry: what the code means and the default advice.
struct ErrorInfo {
  std::string_view code, title, fix;
};
const ErrorInfo* FindError(std::string_view code);

}  // namespace npu

#define NPU_RETURN_IF_ERROR(expr)          \
  do {                                     \
    ::npu::Status npu_st_ = (expr);        \
    if (!npu_st_.ok()) return npu_st_;     \
  } while (0)

#define NPU_CONCAT_INNER(a, b) a##b
#define NPU_CONCAT(a, b) NPU_CONCAT_INNER(a, b)
#define NPU_ASSIGN_OR_RETURN(lhs, expr) NPU_ASSIGN_OR_RETURN_IMPL(NPU_CONCAT(npu_r_, __LINE__), lhs, expr)
#define NPU_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()
