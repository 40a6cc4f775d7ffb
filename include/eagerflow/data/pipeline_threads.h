// Hooks around the waits of a dataset pass's consumer for the pass's own threads: for the
// next element of a prefetch or parallel map stage, and for those threads to finish when
// the pass is destroyed. Not part of eagerflow.h: only embedders need it.
//
// Note [waiting on pipeline threads]: a consumer that holds a lock the pipeline's threads
// need would deadlock waiting for them. The Python bindings install hooks that release
// the GIL for each wait when the waiting thread holds it, so Python functions in a
// pipeline (map, from_generator) keep running on its threads even when the consumer is
// C++ called from Python with the GIL held (Model.fit of a dataset).
#pragma once

namespace ef::data {

struct WaitHooks {
  // Called on the consumer's thread before it waits; the result goes to `after`, called
  // when the wait is over. Either may be null.
  void* (*before)() = nullptr;
  void (*after)(void* state) = nullptr;
};

// Installs the hooks for every pass in the process, replacing earlier ones; install them
// before any pass starts (at startup).
void set_wait_hooks(WaitHooks hooks);

}  // namespace ef::data
