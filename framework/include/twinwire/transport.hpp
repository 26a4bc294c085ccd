// SPDX-License-Identifier: MIT
// Loaded transports: the built-in TCP backend and plugins found with dlopen.
#pragma once

#include <twinwire/export.hpp>

#include <twinwire/config.hpp>
#include <twinwire/transport.h>

#include <memory>
#include <string>
#include <vector>

namespace twinwire {

class Loop;

/// What the loader did, step by step, for logs and twinwire-info.
struct TW_API PluginLoadReport {
    struct Attempt {
        std::string path;   ///< the file tried (absolute)
        std::string result; ///< "not found", "dlopen failed: ...", "loaded", ...
    };
    std::vector<std::string> search_dirs; ///< in order, with why each is on the list
    std::vector<Attempt> attempts;
    bool loaded = false;
    std::string path;       ///< the file that loaded
    std::string reason;     ///< why nothing loaded (one line), "" when loaded
    uint32_t abi_major = 0; ///< of the plugin that loaded
    uint32_t abi_minor = 0;
    std::string plugin_version;
};

/// A plugin file that passed dlopen, dlsym and the ABI checks, not yet
/// initialised.  Owns the dlopen handle.
class TW_API PluginLibrary {
public:
    /// Search for "twinwire-<name>-abi<N>.so" and open it.  Where: the
    /// directories (or the one file) of plugin_path, whose environment form
    /// is TWINWIRE_PLUGIN_PATH (never in setuid/setgid programs); when it
    /// is unset, the installed plugin directory.  Never the working
    /// directory; only absolute paths.  The first file that exists decides,
    /// and it must declare the transport `name`.  Returns nullptr with
    /// report->reason on failure.
    [[nodiscard]] static std::unique_ptr<PluginLibrary> open(const std::string &name, const Config &config,
                                                             PluginLoadReport *report);
    /// Open exactly this file (absolute path); when `expected_name` is not
    /// empty the plugin must declare that transport name.
    [[nodiscard]] static std::unique_ptr<PluginLibrary> open_file(const std::string &path, PluginLoadReport *report,
                                                                  const std::string &expected_name = {});
    ~PluginLibrary();

    const tw_plugin_info &info() const;
    /// The plugin's probe() (devices, ports, limits; no init): "" when it has none.
    std::string probe(const Config &config) const;
    /// The vtable with every optional member filled (stubs return -EOPNOTSUPP).
    const tw_transport_ops &ops() const;
    const std::string &path() const;

private:
    /// Its dlopen handle, plugin info and vtable (framework/src/plugin_library.cpp).
    struct Impl;
    PluginLibrary();
    std::unique_ptr<Impl> impl_;
};

/**
 * An initialised transport: ops + tw_transport handle + its per-loop state.
 * One per transport per process.
 */
class TW_API Transport {
public:
    /// The built-in TCP backend.  Throws std::runtime_error if it cannot init.
    [[nodiscard]] static std::unique_ptr<Transport> builtin_tcp(const Config &config);
    /// Initialise a loaded plugin.  Returns nullptr and sets *why when the
    /// plugin's init refuses.  Throws ConfigError when init reports a bad
    /// value (-TW_ECONFIG) or leaves keys under its prefix unread (unknown
    /// keys): configuration mistakes stop start-up in every mode.
    /// Takes ownership of the library.  `host_table_size` 0 hands the
    /// plugin this host's whole tw_host table; a smaller size hands it the
    /// table an older host would (members past the size zeroed), to check
    /// that a plugin does without what it lacks, or that it refuses a table
    /// below TW_HOST_SIZE_V1 (std::invalid_argument below the 8-byte header).
    [[nodiscard]] static std::unique_ptr<Transport> from_plugin(std::unique_ptr<PluginLibrary> library,
                                                                const Config &config, std::string *why,
                                                                uint32_t host_table_size = 0);
    ~Transport(); ///< fini, then dlclose.  Every loop must be detached.

    const tw_transport_ops &ops() const;
    tw_transport *handle() const;
    const std::string &name() const;
    uint64_t caps() const;
    const PluginLibrary *library() const;

    /// Attach to `loop` (on the loop's thread; idempotent) and return the
    /// per-loop state.  Also registers the pending-data hooks with the loop.
    tw_transport_loop *attach(Loop &loop);
    /// The per-loop state, or nullptr when not attached.
    tw_transport_loop *tloop(const Loop &loop) const;
    /// Detach from `loop` (on its thread) after its connections are closed.
    void detach(Loop &loop);

    /// Text for an error code of this transport.
    std::string error_text(int err) const;
    /// ops.describe(), as a string ("" when unsupported).
    std::string describe() const;

private:
    /// Its vtable, handle, library, host services and loops (framework/src/transport.cpp).
    struct Impl;
    Transport();
    std::unique_ptr<Impl> impl_;
};

/// The transports a process uses, decided from the config.
struct TW_API TransportSelection {
    std::unique_ptr<Transport> tcp;                  ///< the built-in backend, always initialised
    std::vector<std::unique_ptr<Transport>> plugins; ///< plugins that loaded and initialised, in list order
    /// Listened on and connected with, in order of preference: auto gives
    /// rdma (when usable) then tcp; a list gives the listed transports
    /// that loaded; a single name gives that transport alone.
    std::vector<Transport *> in_use;
    /// auto or a list: a transport that cannot listen on an address is
    /// skipped (the last one must listen), and a failed connect is retried
    /// over the next transport in use.
    bool fallback = false;
    std::string chosen;                    ///< the first in use: "rdma", "tcp", "foo"
    std::string reason;                    ///< one line: why these transports
    std::vector<PluginLoadReport> reports; ///< what the loader did, per plugin tried

    /// A loaded transport by name (tcp always), or nullptr.
    Transport *find(const std::string &name) const;
    /// "rdma+tcp": the transports in use, in order.
    std::string in_use_names() const;
};

/// One plugin file found on the search path, opened but never initialised.
struct TW_API PluginFileReport {
    std::string path;
    std::string name;    ///< as declared when it loads, else from the file name
    bool loaded = false; ///< passed every check of the loader (no init)
    std::string why_not; ///< when it did not
    uint32_t abi_major = 0;
    uint32_t abi_minor = 0;
    std::string plugin_version;
    uint64_t caps = 0; ///< TW_CAP_*
    std::string description;
};

/// Every twinwire-*-abi*.so in the search path's directories (and its file
/// entries), in search order, each opened as the loader would (a file that
/// another ABI major built is listed with that reason).  `places` gets the
/// places looked at.
TW_API std::vector<PluginFileReport> list_plugin_files(const Config &config, std::vector<std::string> *places);

/**
 * Check the keys of every transport that has keys set ("rdma.*", "tcp.*",
 * "NAME.*") with that transport's check_config, without init, whatever
 * `transport` says: the built-in TCP backend directly, a plugin after
 * loading it from the search path.  Throws ConfigError for a bad value, an
 * unknown key, or keys of a transport whose plugin cannot be loaded (not
 * installed: remove the keys or install it).  A plugin without
 * check_config is logged as not checked.  select_transports() calls it.
 */
TW_API void check_transport_keys(const Config &config);

/// The keys transport `name` knows (its check_config looks them up with
/// nothing set; the built-in TCP backend's init if it has none), for --help.
/// Empty when the plugin is not found or cannot say.
TW_API std::vector<std::string> transport_keys(const std::string &name, const Config &config);

/**
 * Decide from `transport`: tcp never touches a plugin; a single NAME loads
 * and inits that plugin or throws std::runtime_error with the reason; a
 * list tries each in order, logging each one skipped (throws when none is
 * usable); auto is rdma if usable, else tcp, logging ONE line with the
 * reason.  Configuration mistakes throw ConfigError in every mode.
 */
[[nodiscard]] TW_API TransportSelection select_transports(const Config &config);

} // namespace twinwire
