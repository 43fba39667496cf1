// A list of at most a few items, held in place, that a constant expression
// builds from a braced list: what a declaration made at compile time lists
// (a mutator's switches, the validators of a rule), where a std::vector would
// need a constructor to run before main.
#pragma once

#include <array>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>

namespace aiadmit {

template <class T, size_t Capacity>
class BoundedList {
 public:
  constexpr BoundedList() = default;
  constexpr BoundedList(std::initializer_list<T> items) {
    // Too many: a compile error where the list must be a constant, else an
    // exception before main.
    if (items.size() > Capacity) throw std::length_error("BoundedList: more items than it holds");
    for (const T& item : items) items_[size_++] = item;
  }

  constexpr const T* begin() const { return items_.data(); }
  constexpr const T* end() const { return items_.data() + size_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr const T& operator[](size_t index) const { return items_[index]; }

 private:
  std::array<T, Capacity> items_{};
  size_t size_ = 0;
};

}  // namespace aiadmit
