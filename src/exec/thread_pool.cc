#include <condition_variable>
#include <mutex>
#include <thread>

#include "exec/kernel.h"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace gpuclean::exec {
namespace {
// A kernel that calls ParallelFor from inside a chunk runs the inner loop
// inline rather than re-entering the pool.
thread_local bool inside_chunk = false;
}  // namespace

// Workers wait for a job generation; each job is a fixed set of chunks that
// workers and the caller claim with an atomic counter.
struct ThreadPool::State {
  std::mutex mutex;
  std::condition_variable wake;
  std::condition_variable done;
  std::vector<std::thread> workers;
  const std::function<void(int64_t, int64_t)>* fn = nullptr;
  int64_t n = 0;
  int64_t chunks = 0;
  int64_t next_chunk = 0;
  int64_t finished_chunks = 0;
  uint64_t generation = 0;
  bool stop = false;

  bool RunOneChunk(std::unique_lock<std::mutex>& lock) {
    if (next_chunk >= chunks) return false;
    const int64_t c = next_chunk++;
    const int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    const auto* f = fn;
    lock.unlock();
    inside_chunk = true;
    (*f)(begin, end);
    inside_chunk = false;
    lock.lock();
    if (++finished_chunks == chunks) done.notify_all();
    return true;
  }

  void WorkerLoop() {
    std::unique_lock<std::mutex> lock(mutex);
    uint64_t seen = 0;
    while (true) {
      wake.wait(lock, [&] { return stop || (generation != seen && next_chunk < chunks); });
      if (stop) return;
      seen = generation;
      while (RunOneChunk(lock)) {}
    }
  }
};

// Built with oneDNN, whose OpenMP threads spin for a while after each of
// its calls, the chunks run on those threads too: a pool of our own then
// waited for a core an idle OpenMP thread was spinning on, and two threads
// ran efficientnet_b0 slower than one (16.4 vs 14.4 ms). Chunks are the same
// either way, so the results are too.
#ifdef _OPENMP
constexpr bool kChunksOnOpenMp = true;
#else
constexpr bool kChunksOnOpenMp = false;
#endif

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)), state_(std::make_unique<State>()) {
  if (kChunksOnOpenMp) return;
  for (int i = 1; i < threads_; ++i) state_->workers.emplace_back([s = state_.get()] { s->WorkerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stop = true;
  }
  state_->wake.notify_all();
  for (auto& w : state_->workers) w.join();
}

void ThreadPool::ParallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  grain = std::max<int64_t>(1, grain);
  const int64_t chunks = std::min<int64_t>(threads_, (n + grain - 1) / grain);
  if (chunks <= 1 || inside_chunk) {
    fn(0, n);
    return;
  }
#ifdef _OPENMP
#pragma omp parallel num_threads(static_cast <int>(chunks))
  {
    // The runtime may give fewer threads than asked: each takes every
    // team-size-th chunk.
    inside_chunk = true;
    for (int64_t c = omp_get_thread_num(); c < chunks; c += omp_get_num_threads())
      fn(n * c / chunks, n * (c + 1) / chunks);
    inside_chunk = false;
  }
  return;
#endif
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->fn = &fn;
  state_->n = n;
  state_->chunks = chunks;
  state_->next_chunk = 0;
  state_->finished_chunks = 0;
  ++state_->generation;
  state_->wake.notify_all();
  while (state_->RunOneChunk(lock)) {}
  state_->done.wait(lock, [&] { return state_->finished_chunks == state_->chunks; });
  state_->chunks = 0;
  state_->fn = nullptr;
}

}  // namespace gpuclean::exec
