// SPDX-License-Identifier: MIT
// The keyspace's hash table against std::map, with hashes forced to collide.
#include "key_table.hpp"

#include <catch2/catch.hpp>

#include <map>
#include <random>

TEST_CASE("the key table agrees with std::map under random inserts and erases with colliding hashes", "[kvd][keytable]")
{
    for (uint64_t hash_range : {1ull, 7ull, 1000ull, 0ull}) {
        kvd::KeyTable table;
        std::map<std::string, std::string> model;
        // hash_range 0: the real hash; otherwise few distinct values, so
        // probe chains wrap and interleave and erase must shift them back.
        auto hash_of = [hash_range](const std::string &k) {
            uint64_t h = kvd::KeyTable::hash(k);
            return hash_range ? (h % hash_range) * 0x9e3779b97f4a7c15ull : h;
        };
        std::mt19937_64 rng(hash_range + 1);
        for (int step = 0; step < 20000; ++step) {
            std::string key = "k" + std::to_string(rng() % 500);
            uint64_t h = hash_of(key);
            kvd::Item *item = table.find(key, h);
            REQUIRE((item != nullptr) == (model.count(key) == 1));
            if (item) REQUIRE(item->value == model[key]);
            if (rng() % 3 == 0 && item) {
                table.erase(key, h);
                model.erase(key);
            } else if (!item) {
                std::string value = "v" + std::to_string(step);
                table.insert(key, h, value);
                model[key] = value;
            }
            REQUIRE(table.size() == model.size());
        }
        size_t seen = 0;
        table.for_each([&](const kvd::Item &it) {
            ++seen;
            CHECK(model.at(std::string(it.key())) == it.value);
        });
        CHECK(seen == model.size());
        table.clear();
        CHECK(table.size() == 0);
        CHECK(table.find("k1", hash_of("k1")) == nullptr);
    }
}

TEST_CASE("keys are stored byte for byte, empty and binary keys included", "[kvd][keytable]")
{
    kvd::KeyTable table;
    std::string binary("a\0b", 3);
    table.insert(binary, kvd::KeyTable::hash(binary), "x");
    table.insert("", kvd::KeyTable::hash(""), "empty");
    REQUIRE(table.find(binary, kvd::KeyTable::hash(binary)) != nullptr);
    CHECK(table.find(binary, kvd::KeyTable::hash(binary))->key() == binary);
    CHECK(table.find("", kvd::KeyTable::hash(""))->value == "empty");
    CHECK(table.find("a", kvd::KeyTable::hash("a")) == nullptr);
}
