#pragma once

namespace clusterd {

// Marks the calling thread as background work: Linux's SCHED_BATCH policy. The thread keeps its
// share of the CPU (the same nice value), but its wake-ups do not preempt a running thread: it
// runs on a free core at once, or at the running thread's next scheduler tick.
//
// For threads whose work can wait a tick: the store's watch deliveries and inotify reader, the
// controllers that derive ConfigMaps from what the store holds, periodic accounting. Every store
// write wakes some of them; as ordinary threads they preempted the thread that wrote, so a
// report's recovery strand was put off by the work its own writes woke (docs/benchmarks.md,
// "Ninth round"). A background thread holding a lock an ordinary thread waits for runs as soon as
// that thread blocks (the core is then free), so no priority inversion follows.
//
// Returns false when the kernel refused (the thread then runs as before).
bool MarkCurrentThreadBackground();

// Whether the calling thread runs as background work (tests).
bool CurrentThreadIsBackground();

}  // namespace clusterd
