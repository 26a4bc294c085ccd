// SPDX-License-Identifier: MIT
// Configuration: an INI-style file, TWINWIRE_* environment overrides and API
// calls, validated against a schema of known keys.
#pragma once

#include <twinwire/error.hpp>
#include <twinwire/export.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace twinwire {

/// Thrown for unknown keys, bad values and unreadable files.  what() names the
/// key, the value and where it came from ("twinwire.conf:12"); a key or value
/// is quoted with its bytes outside printable ASCII escaped (\xNN) and cut
/// after 64 bytes with its length ("'xxx'... (67108864 bytes)"); code() is
/// errc::bad_config, errc::unknown_config_key, or for a file that cannot be
/// read its errno (== std::errc::no_such_file_or_directory, ...).  A
/// StartupError: catching that around start-up catches these too.
class TW_API ConfigError : public StartupError {
public:
    explicit ConfigError(const std::string &what) : StartupError(errc::bad_config, what) {}
    ConfigError(std::error_code code, const std::string &what) : StartupError(code, what) {}
    ConfigError(errc code, const std::string &what) : StartupError(code, what) {}
};

/// "foo": a transport name ([a-z0-9_], 1..32, not "auto").  Returns "" when
/// good, otherwise what is wrong.
TW_API std::string check_transport_name(const std::string &name);
/// "auto", "tcp", "rdma", "foo,tcp" -> its names, in order.  Throws
/// ConfigError when the text is not auto, one name or a list of names
/// (auto alone; no name twice).
TW_API std::vector<std::string> parse_transport_list(const std::string &text);

/// One known key.  `check` returns an empty string when the value is good,
/// otherwise what is wrong with it ("expected an integer 1..1024").
struct TW_API ConfigKey {
    std::string name;          ///< "listen_port", "kvd.maxclients"
    std::string default_value; ///< as text; "" = unset
    std::string help;          ///< one line for --help and the docs
    std::function<std::string(const std::string &)> check;
};

/// Common validators for ConfigKey::check.
namespace check {
TW_API std::function<std::string(const std::string &)> integer(int64_t min, int64_t max);
TW_API std::function<std::string(const std::string &)> size_bytes(uint64_t min, uint64_t max); ///< 64k, 4M, 1G
TW_API std::function<std::string(const std::string &)> one_of(std::vector<std::string> values);
TW_API std::function<std::string(const std::string &)> boolean(); ///< yes/no/true/false/on/off/1/0
TW_API std::function<std::string(const std::string &)> any();
TW_API std::function<std::string(const std::string &)> absolute_path_or_empty();
TW_API std::function<std::string(const std::string &)> absolute_path_list_or_empty(); ///< "/a:/b"
} // namespace check

/// Where a value came from, for error messages.
struct TW_API ConfigValue {
    std::string value;
    std::string origin; ///< "default", "twinwire.conf:12", "environment TWINWIRE_X", "api"
};

/**
 * The configuration.  Precedence, lowest first: defaults, the file,
 * the environment (TWINWIRE_<KEY>, dots as underscores, upper case), API
 * calls (set()).  Keys "NAME.key" whose NAME is not the prefix of an
 * application key ("kvd.") are a transport's keys: they are kept as they
 * are and checked by that transport's check_config and init when the
 * transports are selected (see transport_key_names(), unknown_keys_under()).
 */
class TW_API Config {
public:
    /// A config with the framework's own keys and their defaults.
    Config();
    ~Config();
    /// Copies are deep: each holds its own schema and values.
    Config(const Config &other);
    Config &operator=(const Config &other);
    /// A moved-from Config is empty (no keys, no values) until written to.
    Config(Config &&other) noexcept;
    Config &operator=(Config &&other) noexcept;

    /// Add application keys (a daemon's own settings) to the schema.
    void define(ConfigKey key);

    /// The largest configuration file load_file() reads: 1 MiB.
    static constexpr size_t max_file_size = size_t(1) << 20;

    /// Read an INI file: "key = value" lines, '#' or ';' comments, optional
    /// "[section]" headers that prefix keys ("[rdma]" + "ring_size" = "rdma.ring_size";
    /// "[twinwire]" adds no prefix).  Throws ConfigError naming file:line.
    /// Only a regular file of at most max_file_size bytes is read: a FIFO,
    /// device, socket or directory is refused at once (errc::bad_config),
    /// without blocking on a FIFO that has no writer.
    void load_file(const std::string &path);
    /// Parse INI text as if read from `name` (for tests and embedded configs).
    void load_string(const std::string &text, const std::string &name);
    /// Apply TWINWIRE_* environment variables.  Throws ConfigError.
    void load_environment();
    /// Set one key from code or a command line.  Throws ConfigError.
    void set(const std::string &key, const std::string &value, const std::string &origin = "api");

    /// The value of a key, or nullptr when neither set nor defaulted.
    const ConfigValue *find(const std::string &key) const;
    std::string get(const std::string &key) const; ///< "" when unset
    int64_t get_int(const std::string &key) const;
    uint64_t get_size(const std::string &key) const;
    bool get_bool(const std::string &key) const;

    // The framework's own settings, typed.
    std::string transport() const;                   ///< transport = auto | tcp | NAME | NAME,NAME,...
    std::vector<std::string> transport_list() const; ///< the names of `transport`, in order
    std::string
    plugin_path() const; ///< plugin_path = /abs/dir[:/abs/dir...] or /abs/file.so ("" = installed directory)
    std::string listen_address() const;   ///< listen_address = 127.0.0.1
    uint16_t listen_port() const;         ///< listen_port = 7379
    unsigned threads() const;             ///< threads = 1
    int listen_backlog() const;           ///< listen_backlog = 511
    uint32_t connect_timeout_ms() const;  ///< connect_timeout_ms = 3000
    uint32_t shutdown_timeout_ms() const; ///< shutdown_timeout_ms = 5000
    size_t read_buffer_size() const;      ///< read_buffer_size = 64k (bytes per read call)
    size_t write_buffer_limit() const;   ///< write_buffer_limit = 64M (output queued per connection before writes fail)
    size_t write_high_watermark() const; ///< write_high_watermark = 1M (Connection::write_blocked() above it)
    size_t write_low_watermark() const;  ///< write_low_watermark = 256k (on_write_low when output falls to it)
    uint32_t read_timeout_ms() const;    ///< read_timeout_ms = 0 (off)
    uint32_t write_timeout_ms() const;   ///< write_timeout_ms = 0 (off)
    uint32_t idle_timeout_ms() const;    ///< idle_timeout_ms = 0 (off)
    /// Checks that involve several keys (watermarks below the write limit).
    /// Throws ConfigError; Runtime::start() calls it.
    void check_connection_settings() const;
    std::string log_level() const; ///< log_level = error|warn|info|debug|trace
    std::string log_file() const;  ///< log_file = "" (stderr)
    std::string log_ident() const; ///< log_ident = "" (the program's name)

    /// Keys under `prefix` ("rdma.") that are set but not in `looked_up`.
    std::vector<std::string> unknown_keys_under(const std::string &prefix,
                                                const std::vector<std::string> &looked_up) const;
    /// Every key with a value, sorted (for --check-config and docs).
    std::vector<std::pair<std::string, ConfigValue>> entries() const;
    /// The schema, sorted by name.
    std::vector<ConfigKey> schema() const;
    /// The transports that have keys set ("rdma" for rdma.ring_size), sorted.
    std::vector<std::string> transport_key_names() const;

private:
    /// Its schema and values (framework/src/config_impl.hpp).
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace twinwire
