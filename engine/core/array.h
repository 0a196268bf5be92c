// host arrays: contiguous, structure-of-arrays fields of Model/State/Control
#pragma once

#include <vector>

namespace adj {

template <class T>
using Array = std::vector<T>;

template <class T>
inline T* data_or_null(Array<T>& a) {
  return a.empty() ? nullptr : a.data();
}
template <class T>
inline const T* data_or_null(const Array<T>& a) {
  return a.empty() ? nullptr : a.data();
}

}  // namespace adj
