// SPDX-License-Identifier: MIT
// What the conformance cases need to know about the transport under test.
// Each conformance executable (one per transport) supplies one context;
// the cases are written once against the raw vtable.
#pragma once

#include <twinwire/config.hpp>
#include <twinwire/transport.hpp>

#include <sys/socket.h>

#include <memory>
#include <optional>
#include <string>

namespace twinwire::conformance {

class TransportContext {
public:
    virtual ~TransportContext() = default;
    /// "tcp", "rdma": for messages.
    virtual std::string name() const = 0;
    /// The address servers listen on (port 0: the transport picks one).
    virtual sockaddr_storage server_address() const = 0;
    /// An IPv6 address to listen on, when the transport claims TW_CAP_IPV6.
    virtual std::optional<sockaddr_storage> server_address_v6() const { return std::nullopt; }
    /// The local address clients bind before connecting, or none.
    virtual std::optional<sockaddr_storage> client_source() const { return std::nullopt; }
    /// An address where a connect is never answered (packets dropped), or
    /// none with the reason in *why.
    virtual std::optional<sockaddr_storage> silent_address(std::string *why) const = 0;
    /// Load and initialise the transport; nullptr with the reason in *why.
    virtual std::unique_ptr<Transport> create_transport(std::string *why) = 0;
    /// A runtime configuration that selects this transport alone, for the
    /// cases that need the framework above it (one-sided remote memory).
    virtual Config runtime_config() const
    {
        Config config;
        config.set("transport", name());
        return config;
    }
    /// The transport's own operations table, before the host filled the
    /// optional members it leaves out with stubs: which optional operations
    /// it really has.  Plugins: the table their entry point returned.
    virtual const tw_transport_ops *own_ops(const Transport &transport) const
    {
        return transport.library() ? transport.library()->info().ops : nullptr;
    }
};

/// Load the plugin `name` from the plugin search path (plugin_path, else
/// TWINWIRE_PLUGIN_PATH or the installed directory) and initialise it with
/// `config`; nullptr with the reason in *why.  `host_table_size` as for
/// Transport::from_plugin.
std::unique_ptr<Transport> load_plugin(const std::string &name, const Config &config, std::string *why,
                                       uint32_t host_table_size = 0);

/// The variable's value, or nullptr when it is unset or empty.
const char *env_or_null(const char *name);
/// /sys/class/infiniband lists a device (the guest has two; this host none).
bool has_rdma_device();

/// The context of this executable (set by its main before the cases run).
TransportContext &context();
void set_context(TransportContext *context);

/// The transport under test, created on first use and kept for the whole
/// run (loops attach and detach per case).  A failure to create it fails
/// the case that asked, with the reason.
Transport &transport();
/// own_ops() of the transport under test (nullptr: nothing optional).
const tw_transport_ops *plugin_ops();
/// Finalise the transport (before main returns).
void release_transport();

/// Run the Catch2 session with `context`; the common main of every
/// conformance executable.  Reports with the "conformance" table reporter
/// (one line per case: PASS, FAIL or SKIP and why) unless argv names one.
int run_cases(int argc, char **argv, TransportContext &context);

} // namespace twinwire::conformance
