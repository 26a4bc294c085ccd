// SPDX-License-Identifier: MIT
// A small streaming JSON writer: commas and escaping done right, nothing more.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace twinwire::bench {

class JsonWriter {
public:
    JsonWriter &begin_object();
    JsonWriter &end_object();
    JsonWriter &begin_array();
    JsonWriter &end_array();
    /// The key of the next value (inside an object).
    JsonWriter &key(std::string_view name);
    JsonWriter &value(std::string_view text);
    JsonWriter &value(const char *text) { return value(std::string_view(text)); }
    JsonWriter &value(uint64_t number);
    JsonWriter &value(unsigned number) { return value(static_cast<uint64_t>(number)); }
    JsonWriter &value(double number); ///< non-finite numbers become null
    JsonWriter &value(bool flag);

    const std::string &text() const { return out_; }

private:
    void separate();
    std::string out_;
    std::vector<bool> first_; ///< per open container: nothing written yet
    bool after_key_ = false;
};

} // namespace twinwire::bench
