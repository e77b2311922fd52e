// The objects the C interface hands out (data buffers, datasets, model descriptions): owned here, named by their
// address, so destroying one twice, or passing one that was never made, is an error code and not a crash.
#pragma once
#include <map>
#include <memory>
#include <mutex>

namespace npu::acl {

template <typename T>
class Handles {
 public:
  T* Make(T value) {
    auto p = std::make_unique<T>(std::move(value));
    T* raw = p.get();
    std::lock_guard lock(mu_);
    live_.emplace(raw, std::move(p));
    return raw;
  }
  bool Live(const T* p) const {
    std::lock_guard lock(mu_);
    return live_.count(const_cast<T*>(p)) > 0;
  }
  bool Destroy(const T* p) {
    std::lock_guard lock(mu_);
    return live_.erase(const_cast<T*>(p)) > 0;
  }

 private:
  mutable std::mutex mu_;
  std::map<T*, std::unique_ptr<T>> live_;
};

}  // namespace npu::acl
