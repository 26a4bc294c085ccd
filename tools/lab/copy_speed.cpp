// twinwire-copy-speed: how fast this CPU copies 64 KiB blocks with glibc's
// memcpy, with `rep movsb` and with a 16-byte vector loop. Under QEMU's TCG
// `rep movsb` runs one byte per step, which is why the SoftRoCE guest's CPU
// hides ERMS (tools/softroce/README.md, "Acceleration"); run it in the guest
// with SOFTROCE_RUN_CPU=max and without to see the difference.
#include <emmintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

constexpr size_t kBlock = 64 * 1024;
constexpr size_t kTarget = 4 * 1024 * 1024; // the copies walk a ring this big

void rep_movsb(void *dst, const void *src, size_t n)
{
    asm volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
}

void sse2_loop(void *dst, const void *src, size_t n)
{
    auto *d = static_cast<char *>(dst);
    auto *s = static_cast<const char *>(src);
    for (size_t i = 0; i < n; i += 64) {
        __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i));
        __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 16));
        __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 32));
        __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i *>(s + i + 48));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i), a);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i + 16), b);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i + 32), c);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(d + i + 48), e);
    }
}

void glibc_memcpy(void *dst, const void *src, size_t n) { std::memcpy(dst, src, n); }

double mb_per_s(void (*copy)(void *, const void *, size_t), char *ring, const char *src, int blocks)
{
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < blocks; ++i) copy(ring + (i * kBlock) % kTarget, src, kBlock);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    return blocks * double(kBlock) / took.count() / (1 << 20);
}

} // namespace

int main(int argc, char **argv)
{
    int blocks = argc > 1 ? std::atoi(argv[1]) : 500;
    if (blocks <= 0) {
        std::fprintf(stderr, "usage: twinwire-copy-speed [blocks of 64 KiB per copy, default 500]\n");
        return 2;
    }
    std::vector<char> src(kBlock, 1), ring(kTarget, 0);
    struct {
        const char *name;
        void (*copy)(void *, const void *, size_t);
    } const ways[] = {{"memcpy", glibc_memcpy}, {"rep-movsb", rep_movsb}, {"sse2-loop", sse2_loop}};
    std::printf("copy\tMB/s (2^20), %d blocks of 64 KiB; best of 3\n", blocks);
    for (const auto &way : ways) {
        double best = 0;
        for (int round = 0; round < 3; ++round) {
            double r = mb_per_s(way.copy, ring.data(), src.data(), blocks);
            if (r > best) best = r;
        }
        std::printf("%s\t%.0f\n", way.name, best);
    }
    return 0;
}
