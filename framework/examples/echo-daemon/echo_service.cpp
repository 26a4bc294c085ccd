#include "echo_service.hpp"

namespace echo {

std::shared_ptr<twinwire::Listener> serve(twinwire::Runtime &runtime, const twinwire::ListenOptions &where)
{
    return runtime.listen(where, [](const twinwire::ConnectionPtr &conn) {
        conn->on_data([](twinwire::Connection &c, twinwire::Buffer &in) { c.write(in); });
        // The client's end-of-stream: what it sent has been echoed, so end ours.
        conn->on_eof([](twinwire::Connection &c) { c.close(); });
    });
}

} // namespace echo
