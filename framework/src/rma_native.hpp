// SPDX-License-Identifier: MIT
// RMA through a transport that does it itself (TW_CAP_RMA: RDMA READ/WRITE
// into a window bound to the connection): the host's side of the rma_*
// members.  It owns the contexts the transport's callbacks carry, turns
// their statuses into error codes, and queues the application's callbacks
// for the connection to run: at once when the transport calls back (it does
// so from its own event delivery on the loop, as for any event), from a
// posted task when they come out of one of the application's calls.
#pragma once

#include <twinwire/rma.hpp>
#include <twinwire/transport.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace twinwire::rma {

class Native {
public:
    /// `run` runs take_completions() now; `wake` posts it to the loop.
    Native(const tw_transport_ops &ops, tw_conn *conn, std::function<void()> run, std::function<void()> wake);
    ~Native();
    Native(const Native &) = delete;
    Native &operator=(const Native &) = delete;

    /// 0 and the exposure's id, or a negative code with why.
    int expose(void *data, size_t len, uint32_t access, uint64_t *id, std::string *descriptor, std::string *why);
    /// 0 (done runs later), or a negative code with why (done never runs).
    int post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local, size_t len, RmaCallback done,
             std::string *why);
    /// Revoke; `done` is queued once the transport says the memory is free.
    void revoke(uint64_t id, std::function<void()> done);
    bool exposed(uint64_t id) const { return exposures_.count(id) != 0; }
    /// Operations started and not completed.
    bool busy() const { return !ops_.empty(); }
    /// Operations the transport refused with -EAGAIN (its send queue was
    /// full), kept in order for retry() when it announces TW_EV_WRITE.
    bool waiting() const { return !waiting_.empty(); }
    void retry();

    std::vector<std::function<void()>> take_completions();
    /// close(): every exposure revoked, no operation's callback will run.
    void withdraw_all();
    /// The connection failed: operations in flight complete with `code`.
    void fail_all(std::error_code code, const std::string &reason);
    /// The transport connection is closed: nothing calls back any more.
    /// Revocations still waiting are done (their memory is free).
    void detach();

private:
    struct Op {
        Native *self;
        RmaCallback done;
        bool dropped = false;
    };
    struct Exposure {
        tw_rma_exposure *handle;
        std::function<void()> revoked; ///< set while its revocation runs
        bool revoking = false;
    };
    struct Revocation {
        Native *self;
        uint64_t id;
    };
    struct Waiting {
        uint32_t op;
        std::string descriptor;
        uint64_t offset;
        void *local;
        size_t len;
        Op *ctx;
    };
    int submit(const Waiting &w);
    static void on_done(void *arg, int status);
    static void on_revoked(void *arg, int status);
    /// From an application's call: run later, from the loop.
    void queue(std::function<void()> fn);
    /// From the transport's callback: run now (no extra wake-up per completion).
    void deliver(std::function<void()> fn);
    std::string last_error() const;

    const tw_transport_ops &ops_table_;
    tw_conn *conn_;
    std::function<void()> run_;
    std::function<void()> wake_;
    uint64_t next_id_ = 1;
    std::unordered_map<uint64_t, Exposure> exposures_;
    std::unordered_set<Op *> ops_;
    std::deque<Waiting> waiting_;
    std::unordered_set<Revocation *> revocations_;
    std::vector<std::function<void()>> completions_;
};

} // namespace twinwire::rma
