// SPDX-License-Identifier: MIT
#include "histogram.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

using twinwire::bench::Histogram;

TEST_CASE("histogram buckets tile the whole 64-bit range without gaps or overlaps", "[histogram]")
{
    const size_t n = Histogram::bucket_count();
    CHECK(Histogram::bucket_low(0) == 0);
    for (size_t i = 0; i + 1 < n; ++i) {
        INFO("bucket " << i);
        REQUIRE(Histogram::bucket_high(i) + 1 == Histogram::bucket_low(i + 1));
        REQUIRE(Histogram::bucket_of(Histogram::bucket_low(i)) == i);
        REQUIRE(Histogram::bucket_of(Histogram::bucket_high(i)) == i);
    }
    CHECK(Histogram::bucket_high(n - 1) == std::numeric_limits<uint64_t>::max());
}

TEST_CASE("values below 256 are exact and larger ones are within 0.8 percent", "[histogram]")
{
    for (uint64_t v = 0; v < 256; ++v) CHECK(Histogram::bucket_low(Histogram::bucket_of(v)) == v);
    std::mt19937_64 rng(7);
    for (int i = 0; i < 100000; ++i) {
        uint64_t v = rng() >> (rng() % 56);
        size_t b = Histogram::bucket_of(v);
        double width = double(Histogram::bucket_high(b) - Histogram::bucket_low(b) + 1);
        INFO("value " << v);
        if (v < 256) REQUIRE(width == 1);
        else REQUIRE(width / double(v) <= 1.0 / 128 + 1e-12);
    }
}

TEST_CASE("percentiles of 1..100000 land within one percent of the exact ranks", "[histogram]")
{
    Histogram h;
    for (uint64_t v = 1; v <= 100000; ++v) h.record(v);
    CHECK(h.count() == 100000);
    CHECK(h.min() == 1);
    CHECK(h.max() == 100000);
    CHECK(h.mean() == Approx(50000.5));
    for (double q : {0.5, 0.9, 0.99, 0.999}) {
        double exact = q * 100000;
        INFO("q = " << q);
        CHECK(std::fabs(double(h.percentile(q)) - exact) / exact < 0.01);
    }
    CHECK(h.percentile(0.0) == 1);
    CHECK(h.percentile(1.0) == 100000);
}

TEST_CASE("a histogram of one repeated value reports that value for every percentile", "[histogram]")
{
    Histogram h;
    for (int i = 0; i < 1000; ++i) h.record(123456789);
    for (double q : {0.0, 0.5, 0.99, 0.999, 1.0}) CHECK(h.percentile(q) == 123456789);
    CHECK(h.mean() == Approx(123456789.0));
}

TEST_CASE("the tail percentiles see the rare slow samples", "[histogram]")
{
    Histogram h;
    for (int i = 0; i < 990; ++i) h.record(10000);  // 10 us
    for (int i = 0; i < 10; ++i) h.record(5000000); // 5 ms
    CHECK(h.percentile(0.5) == Approx(10000).epsilon(0.008));
    CHECK(h.percentile(0.99) == Approx(10000).epsilon(0.008)); // rank 990 is still fast
    CHECK(h.percentile(0.999) == Approx(5000000).epsilon(0.008));
    CHECK(h.mean() == Approx((990 * 10000.0 + 10 * 5000000.0) / 1000));
}

TEST_CASE("merging histograms gives the same figures as recording everything in one", "[histogram]")
{
    Histogram a, b, all;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 5000; ++i) {
        uint64_t v = rng() % 10000000;
        (i % 3 ? a : b).record(v);
        all.record(v);
    }
    Histogram merged;
    merged.merge(a);
    merged.merge(b);
    CHECK(merged.count() == all.count());
    CHECK(merged.min() == all.min());
    CHECK(merged.max() == all.max());
    CHECK(merged.mean() == Approx(all.mean()));
    for (double q : {0.1, 0.5, 0.99, 0.999}) CHECK(merged.percentile(q) == all.percentile(q));
}

TEST_CASE("an empty histogram reports zeros, and clear empties a used one", "[histogram]")
{
    Histogram h;
    CHECK(h.count() == 0);
    CHECK(h.percentile(0.5) == 0);
    CHECK(h.mean() == 0);
    h.record(42);
    h.record(std::numeric_limits<uint64_t>::max());
    CHECK(h.max() == std::numeric_limits<uint64_t>::max());
    h.clear();
    CHECK(h.count() == 0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 0);
}
