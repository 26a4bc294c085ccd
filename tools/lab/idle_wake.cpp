// twinwire-idle-wake: how long a thread blocked in read() takes to run after
// another CPU writes to its pipe, as a function of how long it slept.  On a
// machine that is itself a virtual machine, an idle CPU that halts is woken
// through the hypervisor, which polls for a while before it really sleeps:
// past that window a wake-up costs several times more.  The latency
// benchmarks' 2-vCPU figures cross that line (docs/benchmarks.md, "Two
// vCPUs: the host's idle wake-up"); this measures where it lies.  Run it on
// the host and in the guest (tools/softroce/softroce-run --cpus 2 -- ...).
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <thread>
#include <vector>

namespace {

int64_t now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
}

bool pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

int to_reader[2], to_writer[2];

/// Reads the writer's time stamp, answers with how late it woke.  A stamp
/// of 0 ends it.
void reader(int cpu)
{
    pin(cpu);
    int64_t sent;
    while (read(to_reader[0], &sent, sizeof sent) == sizeof sent && sent != 0) {
        int64_t late = now_ns() - sent;
        if (write(to_writer[1], &late, sizeof late) != sizeof late) return;
    }
}

} // namespace

int main(int argc, char **argv)
{
    const int turns = argc > 1 ? std::atoi(argv[1]) : 2000;
    const int ncpu = int(sysconf(_SC_NPROCESSORS_ONLN));
    if (ncpu < 2) {
        std::printf("twinwire-idle-wake: needs 2 CPUs, this machine has %d\n", ncpu);
        return 77;
    }
    if (turns < 10 || pipe(to_reader) != 0 || pipe(to_writer) != 0) {
        std::fprintf(stderr, "usage: twinwire-idle-wake [TURNS >= 10]\n");
        return 2;
    }
    std::thread woken(reader, 0);
    if (!pin(1)) std::printf("(could not pin the writer to CPU 1)\n");
    std::printf("reader on CPU 0, writer on CPU 1; %d wake-ups per step\n", turns);
    std::printf("%10s %14s %14s\n", "idle (us)", "wake p50 (us)", "wake p90 (us)");
    for (int idle_us : {20, 50, 80, 100, 120, 150, 200, 300, 500, 1000}) {
        std::vector<int64_t> late(size_t(turns), 0);
        for (int64_t &l : late) {
            // Spin, not sleep: the writer's own CPU stays awake.
            const int64_t until = now_ns() + int64_t(idle_us) * 1000;
            while (now_ns() < until) {
            }
            int64_t stamp = now_ns();
            if (write(to_reader[1], &stamp, sizeof stamp) != sizeof stamp ||
                read(to_writer[0], &l, sizeof l) != sizeof l)
                return 1;
        }
        std::sort(late.begin(), late.end());
        std::printf("%10d %14.1f %14.1f\n", idle_us, double(late[late.size() / 2]) / 1e3,
                    double(late[late.size() * 9 / 10]) / 1e3);
    }
    int64_t stop = 0;
    if (write(to_reader[1], &stop, sizeof stop) != sizeof stop) return 1;
    woken.join();
    return 0;
}
