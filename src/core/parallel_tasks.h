// parallel_tasks: a few independent tasks of uneven size on the thread pool of
// include/eagerflow/core/threading.h. Internal to the library (the graph executor).
#pragma once

#include <cstdint>
#include <functional>

namespace ef::detail {

// Runs fn(i) for every i in [0, n), each i a piece of work of its own that the pool's
// threads take one at a time (a thread held up delays one task, never a share of
// them). Runs them in order on the calling thread when there is one thread, n == 1,
// or inside a parallel region. Exceptions thrown by fn propagate to the caller.
void parallel_tasks(int64_t n, const std::function<void(int64_t i)>& fn);

}  // namespace ef::detail
