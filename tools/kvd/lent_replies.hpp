// SPDX-License-Identifier: MIT
// The daemon's ReplyLender: reply bytes straight into a connection's lent
// send buffers (Connection::write_lent).
#pragma once

#include "resp_reply.hpp"

#include <twinwire/connection.hpp>

namespace kvd {

class LentReplies : public ReplyLender {
public:
    explicit LentReplies(twinwire::Connection &conn) : conn_(conn) {}
    bool send_in_place(std::string &pending, std::initializer_list<std::string_view> pieces) override;

private:
    twinwire::Connection &conn_;
};

} // namespace kvd
