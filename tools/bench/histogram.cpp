// SPDX-License-Identifier: MIT
#include "histogram.hpp"

#include <algorithm>
#include <cmath>

namespace twinwire::bench {
namespace {

constexpr unsigned kLinearBits = 8; // values 0..255 have a bucket each
constexpr uint64_t kLinear = uint64_t(1) << kLinearBits;
constexpr unsigned kSubBits = kLinearBits - 1; // 128 buckets per power of two above
constexpr uint64_t kSub = uint64_t(1) << kSubBits;
constexpr size_t kBuckets = kLinear + (64 - kLinearBits) * kSub;

unsigned log2_floor(uint64_t v) { return 63u - static_cast<unsigned>(__builtin_clzll(v)); }

} // namespace

Histogram::Histogram() : buckets_(kBuckets, 0) {}

size_t Histogram::bucket_count() { return kBuckets; }

size_t Histogram::bucket_of(uint64_t value)
{
    if (value < kLinear) return static_cast<size_t>(value);
    unsigned octave = log2_floor(value); // >= kLinearBits
    unsigned shift = octave - kSubBits;  // keeps the top kSubBits+1 bits
    uint64_t mantissa = value >> shift;  // kSub .. 2*kSub-1
    return static_cast<size_t>(kLinear + (octave - kLinearBits) * kSub + (mantissa - kSub));
}

uint64_t Histogram::bucket_low(size_t index)
{
    if (index < kLinear) return index;
    size_t above = index - kLinear;
    unsigned octave = static_cast<unsigned>(above / kSub) + kLinearBits;
    uint64_t mantissa = kSub + above % kSub;
    return mantissa << (octave - kSubBits);
}

uint64_t Histogram::bucket_high(size_t index)
{
    if (index < kLinear) return index;
    unsigned octave = static_cast<unsigned>((index - kLinear) / kSub) + kLinearBits;
    uint64_t width = uint64_t(1) << (octave - kSubBits);
    return bucket_low(index) + (width - 1);
}

void Histogram::record(uint64_t value)
{
    ++buckets_[bucket_of(value)];
    if (count_ == 0 || value < min_) min_ = value;
    if (value > max_) max_ = value;
    ++count_;
    sum_ += value;
}

void Histogram::merge(const Histogram &other)
{
    if (other.count_ == 0) return;
    for (size_t i = 0; i < kBuckets; ++i) buckets_[i] += other.buckets_[i];
    min_ = count_ == 0 ? other.min_ : std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
    count_ += other.count_;
    sum_ += other.sum_;
}

void Histogram::clear()
{
    std::fill(buckets_.begin(), buckets_.end(), 0);
    count_ = min_ = max_ = 0;
    sum_ = 0;
}

double Histogram::mean() const { return count_ ? static_cast<double>(sum_ / count_) : 0.0; }

uint64_t Histogram::percentile(double q) const
{
    if (count_ == 0) return 0;
    q = std::clamp(q, 0.0, 1.0);
    uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
    rank = std::clamp<uint64_t>(rank, 1, count_);
    uint64_t seen = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
        seen += buckets_[i];
        if (seen >= rank) {
            uint64_t low = bucket_low(i), high = bucket_high(i);
            uint64_t middle = low + (high - low) / 2;
            return std::clamp(middle, min_, max_);
        }
    }
    return max_;
}

} // namespace twinwire::bench
