// SPDX-License-Identifier: MIT
#include "json_writer.hpp"
#include "text.hpp"
#include "wire.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>

using namespace twinwire::bench;

TEST_CASE("a bench hello survives encoding and decoding", "[wire]")
{
    unsigned char bytes[wire::kHelloSize];
    wire::encode_hello({wire::Test::Sink, 65536}, bytes);
    CHECK(std::memcmp(bytes, "TWB1", 4) == 0);
    wire::Hello h;
    CHECK(wire::decode_hello(bytes, &h).empty());
    CHECK(h.test == wire::Test::Sink);
    CHECK(h.message_size == 65536);
    CHECK_FALSE(h.zero_copy);
}

TEST_CASE("a bench hello carries the zero-copy flag, and unknown flags are refused", "[wire]")
{
    unsigned char bytes[wire::kHelloSize];
    wire::encode_hello({wire::Test::Echo, 64, true}, bytes);
    wire::Hello h;
    CHECK(wire::decode_hello(bytes, &h).empty());
    CHECK(h.zero_copy);
    bytes[6] = 0x80;
    CHECK(wire::decode_hello(bytes, &h).find("unknown flags 128") != std::string::npos);
}

TEST_CASE("a hello with a wrong magic, version, test or size is refused with the reason", "[wire]")
{
    unsigned char good[wire::kHelloSize];
    wire::encode_hello({wire::Test::Echo, 64}, good);
    wire::Hello h;
    unsigned char bad[wire::kHelloSize];
    std::memcpy(bad, good, sizeof bad);
    bad[0] = 'X';
    CHECK(wire::decode_hello(bad, &h).find("bad magic") != std::string::npos);
    std::memcpy(bad, good, sizeof bad);
    bad[4] = 2;
    CHECK(wire::decode_hello(bad, &h).find("version 2") != std::string::npos);
    std::memcpy(bad, good, sizeof bad);
    bad[5] = 9;
    CHECK(wire::decode_hello(bad, &h).find("unknown test 9") != std::string::npos);
    wire::encode_hello({wire::Test::Echo, 0}, bad);
    CHECK(wire::decode_hello(bad, &h).find("message size 0") != std::string::npos);
}

TEST_CASE("counts are 8 bytes little-endian", "[wire]")
{
    unsigned char b[wire::kCountSize];
    wire::encode_count(0x0102030405060708ull, b);
    CHECK(b[0] == 0x08);
    CHECK(b[7] == 0x01);
    CHECK(wire::decode_count(b) == 0x0102030405060708ull);
}

TEST_CASE("the JSON writer separates members and escapes strings", "[json]")
{
    JsonWriter j;
    j.begin_object().key("a").value(uint64_t(1)).key("s").value("q\"\\\n\x01").key("list").begin_array();
    j.value(1.5).value(true).begin_object().end_object().value(std::nan("")).end_array().end_object();
    CHECK(j.text() == "{\"a\":1,\"s\":\"q\\\"\\\\\\n\\u0001\",\"list\":[1.5,true,{},null]}");
}

TEST_CASE("the JSON writer prints numbers that read back as the same double", "[json]")
{
    // A mean over 200 us with 6 decimals: rounded to nine significant digits,
    // mean and one way (half of it) broke check_local.sh's exact halving.
    const double mean_us = 123456.789 / 1000.0 + 100.0, one_way_us = mean_us / 2;
    for (double x : {mean_us, one_way_us, 0.1, 1e-300, 1.7976931348623157e308, 123456789012.345}) {
        JsonWriter j;
        j.value(x);
        CHECK(std::strtod(j.text().c_str(), nullptr) == x);
    }
    JsonWriter j;
    j.value(mean_us);
    CHECK(std::strtod(j.text().c_str(), nullptr) / 2 == one_way_us);
    JsonWriter three;
    three.value(3.0);
    CHECK(three.text() == "3");
}

TEST_CASE("sizes are printed in the largest exact binary unit", "[text]")
{
    CHECK(format_size(64) == "64 B");
    CHECK(format_size(4096) == "4 KiB");
    CHECK(format_size(1 << 20) == "1 MiB");
    CHECK(format_size(1000) == "1000 B");
    CHECK(format_size(1536 * 1024) == "1536 KiB");
}
