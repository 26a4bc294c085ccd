// SPDX-License-Identifier: MIT
// One client's side of the protocol: requests in, replies out.  Knows
// nothing of connections, so tests and the fuzzer drive it directly.
#pragma once

#include "commands.hpp"
#include "resp_parser.hpp"
#include "transaction.hpp"

#include <twinwire/buffer.hpp>

#include <atomic>
#include <cstdint>
#include <string>

namespace twinwire {
class Connection;
}

namespace kvd {

/// Counters a session adds to (one set per loop in the daemon).
struct SessionCounters {
    std::atomic<uint64_t> commands{0};
    std::atomic<uint64_t> protocol_errors{0};
    std::atomic<uint64_t> replies_too_large{0}; ///< replaced by an error: past RequestLimits::max_reply
    std::atomic<uint64_t> out_of_memory{0};     ///< clients closed because an allocation failed
};

class Session {
public:
    Session(Keyspace &keyspace, Host &host, const RequestLimits &limits, SessionCounters &counters);

    enum class Outcome {
        Idle,       ///< every complete request ran; the rest has not arrived
        Backlogged, ///< stopped because the replies grew past the limit: send them, then feed again
        Close,      ///< QUIT or a protocol error: send the replies, then close (see close_reason)
    };
    /// Run the complete requests at the front of `input`, draining them,
    /// and append their replies to `out`.  Stops early when `out` grows
    /// beyond `out_limit`.  One reply larger than limits.max_reply is
    /// replaced by an error; an allocation failure closes this session
    /// (Close, with out_of_memory()) and never escapes.
    Outcome feed(twinwire::Buffer &input, std::string &out, size_t out_limit);
    /// The same over bytes lent in place (a borrowed receive buffer), while
    /// nothing is left in the connection's input buffer: runs the complete
    /// requests and sets `used` to their bytes.  The rest (a request split
    /// across buffers; anything after a Close) is for feed() once it is in
    /// the input buffer: the parser resumes there.
    Outcome feed_borrowed(std::string_view bytes, std::string &out, size_t out_limit, size_t &used);

    /// QUIT: reply, then close.
    void request_close(std::string reason);
    const std::string &close_reason() const { return close_reason_; }
    /// The close was asked for because of malformed or oversized input.
    bool protocol_error() const { return protocol_error_; }
    /// The close was forced by a failed allocation.
    bool out_of_memory() const { return out_of_memory_; }

    /// The connection this session serves (nullptr in tests); INFO reads its counters.
    twinwire::Connection *connection = nullptr;
    /// Sends large whole replies from lent send buffers (nullptr: copy them).
    ReplyLender *lender = nullptr;
    /// The client's address, for log lines.
    std::string peer = "(no connection)";
    /// The loop this session runs on: its lane of the keyspace's TransactionGate.
    size_t lane = 0;
    /// CLIENT SETNAME / GETNAME / ID.
    std::string name;
    uint64_t id() const { return id_; }
    /// MULTI / EXEC / WATCH state.
    Transaction &transaction() { return transaction_; }
    const RequestLimits &limits() const { return limits_; }
    uint64_t commands_processed() const { return commands_; }
    /// Bytes the parser examined, and bytes copied to make requests
    /// contiguous: the tests' measure that a request costs work linear in
    /// its size however it is split.
    uint64_t parse_bytes_examined() const { return parser_.bytes_examined(); }
    uint64_t bytes_joined() const { return joined_; }

private:
    struct ViewRun {
        size_t used = 0;         ///< bytes of the requests that ran
        bool backlogged = false; ///< stopped with `out` past its limit
    };
    Outcome run(twinwire::Buffer &input, std::string &out, size_t out_limit);
    /// Run the complete requests at the front of `view` (need_ set after an
    /// incomplete one; closing_ after an error or QUIT).
    ViewRun run_view(std::string_view view, Reply &reply, std::string &out, size_t out_limit);
    /// Run request_ with its reply limited to max_reply.
    void run_request(Reply &reply);
    /// Run or queue (inside MULTI) one checked command.
    void dispatch(CommandContext &ctx);
    /// After std::bad_alloc: keep the replies gathered before the failing
    /// request, free what this session holds, and close.
    Outcome give_up_out_of_memory(std::string &out);

    Keyspace &keyspace_;
    Host &host_;
    RequestLimits limits_;
    SessionCounters &counters_;
    RequestParser parser_;
    Request request_;
    size_t reply_start_ = 0; ///< where the running request's reply begins in `out`
    uint64_t joined_ = 0;
    size_t need_ = 0; ///< the request at the front of the input is at least this long
    bool closing_ = false;
    bool protocol_error_ = false;
    bool out_of_memory_ = false;
    std::string close_reason_;
    uint64_t commands_ = 0;
    uint64_t id_;
    Transaction transaction_;
};

} // namespace kvd
