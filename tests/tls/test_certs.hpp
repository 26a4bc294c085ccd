// SPDX-License-Identifier: MIT
// The certificates a tls test program runs with: TLS_TEST_CERTS names the
// directory make-certs.sh filled for this run (run_with_certs.sh); and the
// configuration of a one-loop program over tls that serves with them.
#pragma once

#include <twinwire/config.hpp>

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

inline std::string cert(const char *name)
{
    const char *dir = std::getenv("TLS_TEST_CERTS");
    REQUIRE(dir != nullptr); // run through run_with_certs.sh
    return std::string(dir) + "/" + name;
}

/// transport = tls, one loop, the server's certificate and key, the test CA.
inline twinwire::Config tls_config()
{
    twinwire::Config config;
    config.load_environment(); // TWINWIRE_PLUGIN_PATH
    config.set("transport", "tls");
    config.set("threads", "1");
    config.set("tls.cert_file", cert("server.pem"));
    config.set("tls.key_file", cert("server.key"));
    config.set("tls.ca_file", cert("ca.pem"));
    return config;
}
