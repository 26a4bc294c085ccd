// SPDX-License-Identifier: MIT
// A Config's schema and values (config.cpp, config_transport.cpp), kept out
// of the installed header: none of it is libtwinwire's ABI, and none of it
// is exported (hidden, though Config itself is TW_API).
#pragma once

#include <twinwire/config.hpp>

#include <map>
#include <memory>
#include <string>

namespace twinwire {

struct __attribute__((visibility("hidden"))) Config::Impl {
    std::map<std::string, ConfigKey> schema;
    std::map<std::string, ConfigValue> values;

    /// Check `value` against the schema (or as a transport's key) and set it.
    void assign(const std::string &key, const std::string &value, const std::string &origin);
    /// The key an environment variable's suffix names ("KVD_MAXCLIENTS" -> "kvd.maxclients").
    std::string key_for_environment(const std::string &suffix) const;
    /// "NAME.key" where no application key starts with "NAME.".
    bool is_transport_key(const std::string &key) const;

    // A moved-from Config reads as empty and fills again when written to,
    // as it did when it held its maps by value.
    static const Impl &read(const Config &config)
    {
        static const Impl empty{};
        return config.impl_ ? *config.impl_ : empty;
    }
    static Impl &write(Config &config)
    {
        if (!config.impl_) config.impl_ = std::make_unique<Impl>();
        return *config.impl_;
    }
};

} // namespace twinwire
