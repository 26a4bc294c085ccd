// The echo service: every byte a client sends comes back to it, in order.
#pragma once

#include <twinwire/runtime.hpp>

#include <memory>

namespace echo {

/// Listens where `where` says (the configuration's address and port by
/// default) over every transport the runtime uses, and echoes on each
/// connection it accepts.
std::shared_ptr<twinwire::Listener> serve(twinwire::Runtime &runtime, const twinwire::ListenOptions &where);

} // namespace echo
