// SPDX-License-Identifier: MIT
// A log-linear histogram of non-negative integers (nanoseconds here): exact
// below 256, then 128 buckets per power of two, so any recorded value is
// off by less than 0.8 % when read back.  Fixed size, no allocation on
// record(), and histograms of several connections merge exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace twinwire::bench {

class Histogram {
public:
    Histogram();

    void record(uint64_t value);
    /// Add every sample of `other`.
    void merge(const Histogram &other);
    void clear();

    uint64_t count() const { return count_; }
    uint64_t min() const { return count_ ? min_ : 0; }
    uint64_t max() const { return max_; }
    /// Exact mean of the recorded values (0 when empty).
    double mean() const;
    /// The value below which a fraction `q` (0..1) of the samples lie: the
    /// middle of the bucket holding the sample of rank ceil(q * count),
    /// clamped to [min, max].  0 when empty.
    uint64_t percentile(double q) const;

    /// Bucket arithmetic, public for the tests.
    static size_t bucket_of(uint64_t value);
    static uint64_t bucket_low(size_t index);  ///< smallest value of the bucket
    static uint64_t bucket_high(size_t index); ///< largest value of the bucket
    static size_t bucket_count();

private:
    std::vector<uint64_t> buckets_;
    uint64_t count_ = 0;
    uint64_t min_ = 0;
    uint64_t max_ = 0;
    long double sum_ = 0;
};

} // namespace twinwire::bench
