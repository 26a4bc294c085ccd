// twinwire-wakeup-cost: what small operations cost on this CPU, and what
// touching memory and calling functions cost right after a process wakes
// up.  Under QEMU's TCG (the SoftRoCE guest) a context switch flushes the
// emulated TLB and the jump cache of translated code, so every page a woken
// process touches costs a page walk in the emulator, and every function it
// calls a lookup of its translation; this is the measurement behind
// docs/benchmarks.md's latency breakdown.  Run it on the host and in the
// guest: tools/softroce/softroce-run -- <this binary>.
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <initializer_list>
#include <utility>

namespace {

double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return double(t.tv_sec) * 1e9 + double(t.tv_nsec);
}

__attribute__((noinline)) uint64_t bump(uint64_t x) { return x + 1; }
uint64_t (*volatile indirect)(uint64_t) = bump;

void hot_loops()
{
    constexpr int n = 2000000;
    volatile uint64_t sink = 0;
    timespec ts;
    double t0 = now_ns();
    for (int i = 0; i < n; ++i) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        sink = sink + uint64_t(ts.tv_nsec);
    }
    double t1 = now_ns();
    std::printf("clock_gettime(CLOCK_MONOTONIC): %.1f ns\n", (t1 - t0) / n);
    t0 = now_ns();
    for (int i = 0; i < n; ++i) {
        void *p = std::malloc(64);
        sink = sink + reinterpret_cast<uintptr_t>(p);
        std::free(p);
    }
    t1 = now_ns();
    std::printf("malloc + free of 64 B: %.1f ns\n", (t1 - t0) / n);
    t0 = now_ns();
    uint64_t x = 0;
    for (int i = 0; i < n; ++i) x = indirect(x);
    t1 = now_ns();
    sink = sink + x;
    std::printf("indirect call and return: %.1f ns\n", (t1 - t0) / n);
}

/// Distinct functions, as a transport's layers call them: each its own
/// code (never merged: the constant differs).
template <int I> __attribute__((noinline)) int distinct_fn(int x)
{
    asm volatile("" : "+r"(x));
    return x ^ I;
}

template <int... I> constexpr std::array<int (*)(int), sizeof...(I)> make_functions(std::integer_sequence<int, I...>)
{
    return {&distinct_fn<I>...};
}

constexpr int kMaxFunctions = 1024;
const auto kFunctions = make_functions(std::make_integer_sequence<int, kMaxFunctions>{});

int call_functions(int n)
{
    int x = 0;
    for (int i = 0; i < n; ++i) x = kFunctions[size_t(i)](x);
    return x;
}

/// Two processes pass a byte back and forth over pipes; before each pass
/// the sender reads one byte from each of `pages` distinct pages and calls
/// `functions` distinct functions.
double ping_pong_us(int pages, int functions, int turns)
{
    int there[2], back[2];
    if (pipe(there) != 0 || pipe(back) != 0) return -1;
    size_t len = size_t(pages + 1) * 4096;
    auto *mem = static_cast<volatile char *>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0));
    if (mem == MAP_FAILED) return -1;
    char c = 'x';
    char sink = 0;
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < turns; ++i) {
            if (read(there[0], &c, 1) != 1) _exit(1);
            for (int k = 0; k < pages; ++k) sink = char(sink + mem[size_t(k) * 4096]);
            sink = char(sink + call_functions(functions));
            if (write(back[1], &c, 1) != 1) _exit(1);
        }
        _exit(0);
    }
    double t0 = now_ns();
    for (int i = 0; i < turns; ++i) {
        for (int k = 0; k < pages; ++k) sink = char(sink + mem[size_t(k) * 4096]);
        sink = char(sink + call_functions(functions));
        if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) return -1;
    }
    double t1 = now_ns();
    waitpid(child, nullptr, 0);
    munmap(const_cast<char *>(mem), len);
    for (int fd : {there[0], there[1], back[0], back[1]}) close(fd);
    return (t1 - t0) / turns / 1000.0;
}

/// The round trip with `pages` pages touched or `functions` functions called
/// per side and turn, best of three runs.
double best_round_trip_us(int pages, int functions)
{
    double best = 1e18;
    for (int r = 0; r < 3; ++r) {
        double us = ping_pong_us(pages, functions, 10000);
        if (us < 0) return -1;
        if (us < best) best = us;
    }
    return best;
}

/// Round trips with 0 .. counts[3] of one thing per side and turn (pages
/// touched, or functions called), then its cost per item.  False on error.
bool cost_per_item(const int (&counts)[4], bool functions, const char *per_turn, const char *per_item)
{
    double first = 0, last = 0;
    for (int n : counts) {
        double best = functions ? best_round_trip_us(0, n) : best_round_trip_us(n, 0);
        if (best < 0) {
            std::perror("ping-pong");
            return false;
        }
        std::printf("round trip between two processes, %d %s per side and turn: %.2f us (best of 3)\n", n, per_turn,
                    best);
        if (n == counts[0]) first = best;
        last = best;
    }
    std::printf("each %s after a wake-up: %.0f ns\n", per_item, (last - first) * 1000.0 / (2.0 * counts[3]));
    return true;
}

} // namespace

int main()
{
    hot_loops();
    const int pages[] = {0, 100, 200, 400};
    const int functions[] = {0, 256, 512, kMaxFunctions};
    if (!cost_per_item(pages, false, "pages touched", "page touched")) return 1;
    if (!cost_per_item(functions, true, "distinct functions called", "distinct function called")) return 1;
    return 0;
}
