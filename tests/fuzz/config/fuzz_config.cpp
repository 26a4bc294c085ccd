// SPDX-License-Identifier: MIT
// libFuzzer target: configuration text through the INI parser and the
// schema (Config::load_string).  Bad text must end in a ConfigError that
// names where; text that loads must give values every typed getter accepts,
// and must load the same way again when written back out.
#include "config_parse.hpp"

#include <twinwire/config.hpp>
#include <twinwire/log.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

[[noreturn]] void broken(const std::string &what)
{
    std::fprintf(stderr, "fuzz-config: %s\n", what.c_str());
    std::abort();
}

// Every getter of a loaded configuration works: the checks let nothing
// through that the typed accessors then refuse.
void read_every_value(const twinwire::Config &c)
{
    (void)c.transport();
    (void)c.plugin_path();
    (void)c.listen_address();
    (void)c.listen_port();
    if (c.threads() < 1) broken("threads < 1 accepted");
    if (c.listen_backlog() < 1) broken("listen_backlog < 1 accepted");
    (void)c.connect_timeout_ms();
    (void)c.shutdown_timeout_ms();
    if (c.read_buffer_size() < 512) broken("read_buffer_size < 512 accepted");
    if (c.write_buffer_limit() < 4096) broken("write_buffer_limit < 4096 accepted");
    twinwire::parse_log_level(c.log_level());
    (void)c.log_file();
}

// key = "value" for every loaded entry.
std::string write_back(const twinwire::Config &c)
{
    std::string text;
    for (const auto &[key, value] : c.entries()) text += key + " = \"" + value.value + "\"\n";
    return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const std::string text(reinterpret_cast<const char *>(data), size);
    twinwire::Config config;
    try {
        config.load_string(text, "fuzz.conf");
    } catch (const twinwire::ConfigError &e) {
        if (std::string(e.what()).rfind("fuzz.conf", 0) != 0) broken(std::string("error without a place: ") + e.what());
        return 0;
    }
    try {
        read_every_value(config);
    } catch (const std::exception &e) {
        broken(std::string("an accepted configuration cannot be read: ") + e.what());
    }
    for (const auto &[key, value] : config.entries())
        if (value.value.find('\0') != std::string::npos) broken("a value with a NUL byte was accepted for " + key);
    // A value holding '"' cannot be written back quoted (the format has no
    // escapes): nothing to compare then.
    for (const auto &entry : config.entries())
        if (entry.second.value.find('"') != std::string::npos) return 0;
    const std::string again = write_back(config);
    twinwire::Config reloaded;
    try {
        reloaded.load_string(again, "written-back.conf");
    } catch (const twinwire::ConfigError &e) {
        broken(std::string("accepted values do not load again: ") + e.what());
    }
    for (const auto &[key, value] : config.entries())
        if (reloaded.get(key) != value.value) broken("value of " + key + " changed when written back");
    return 0;
}
