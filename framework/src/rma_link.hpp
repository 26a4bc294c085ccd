// SPDX-License-Identifier: MIT
// The host's RMA emulation for one connection (transports without
// TW_CAP_RMA): the frames of rma_wire.hpp in and out, the exposures this
// side handed out (checked here, on the exposing side), and the reads and
// writes this side started.  It knows nothing of the transport: the
// connection feeds it wire bytes and drains the frames it queues.
#pragma once

#include "rma_wire.hpp"

#include <twinwire/buffer.hpp>
#include <twinwire/rma.hpp>

#include <sys/types.h>

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

namespace twinwire::rma {

class Link {
public:
    /// The first frame this side sends.
    void hello(Buffer &out);
    /// Raw bytes from the transport go here first.
    Buffer &wire_in() { return wire_in_; }
    /// Parse what wire_in holds: stream bytes to `input` as they arrive
    /// (a data frame is never buffered whole), RMA frames served (answers
    /// queued on `out`).  A frame that makes this side answer or work waits
    /// while `out` holds `out_limit` bytes or more: demux stops there and
    /// held() turns true.  False, with why, on a protocol error.
    bool demux(Buffer &input, Buffer &out, size_t out_limit, std::string *why);
    /// demux with no limit on the output (tests and the fuzz target).
    bool demux(Buffer &input, Buffer &out, std::string *why) { return demux(input, out, SIZE_MAX, why); }
    /// The peer sent its end of stream (an `end` frame).
    bool peer_ended() const { return peer_end_; }
    /// demux stopped at a request because the output was full: the
    /// connection stops reading until the peer has read its answers.
    bool held() const { return held_; }
    /// The output has room again: the next demux goes on where it stopped.
    void release() { held_ = false; }
    /// What the transport's last read said (0: end of stream, or an error)
    /// while held: kept here, handled after the held frames.
    void keep_transport_end(ssize_t last) { transport_end_ = last; }
    /// The kept end, once (false when none was kept).
    bool take_transport_end(ssize_t *last);
    /// Bytes this side holds of the peer's that are not the application's
    /// yet: wire bytes not parsed and the current frame (for tests).
    size_t buffered() const { return wire_in_.size() + frame_.capacity(); }

    /// Stream bytes as frames.
    void frame_data(Buffer &out, const void *data, size_t len);
    void frame_data(Buffer &out, Buffer &data);
    void frame_end(Buffer &out);
    /// Queue RMA chunks while `out` holds less than kPumpLow bytes, taking
    /// turns between transfers.  Returns whether work is left.
    bool pump(Buffer &out);
    bool has_work() const { return !turns_.empty() || !read_requests_.empty(); }

    /// Exposing side.
    uint64_t expose(void *data, size_t len, uint32_t access, std::string *descriptor);
    /// False when `id` is not (or no longer) exposed.
    bool revoke(uint64_t id);
    bool exposed(uint64_t id) const { return exposures_.count(id) != 0; }

    /// Initiating side: TW_RMA_OP_READ / _WRITE of the peer's exposure.
    /// Returns 0, or a negative code with why (nothing queued then).
    int post(uint32_t op, const std::string &descriptor, uint64_t offset, void *local, size_t len, RmaCallback done,
             std::string *why);
    /// Callbacks of operations that completed during demux, to be run by the
    /// connection (on its loop, guarded).
    std::vector<std::function<void()>> take_completions();
    /// The connection failed: every operation in flight completes with
    /// `code`; every exposure is withdrawn.
    void fail_all(std::error_code code, const std::string &reason);
    /// close(): exposures withdrawn, operations dropped without callbacks.
    void drop_all();

private:
    struct Exposure {
        char *data;
        size_t len;
        uint32_t access;
        uint64_t key;
    };
    /// A read this side serves, or a write it sends: chunks go out in turns.
    struct Turn {
        bool serve_read; ///< true: READ_DATA of an exposure; false: WRITE_DATA of a local buffer
        uint64_t tag;
        uint64_t id;     ///< serve_read: the exposure
        uint64_t offset; ///< serve_read: in the exposure; write: in the peer's exposure
        uint64_t len;
        uint64_t done = 0;
    };
    /// A read request not yet queued on the output.
    struct Request {
        uint64_t tag;
        std::string fields;
    };
    /// An operation this side started, waiting for its answer.
    struct Op {
        uint32_t op;
        char *local;
        size_t len;
        size_t received = 0;
        Descriptor desc;
        RmaCallback done;
    };

    bool check_hello(std::string *why);
    bool handle(const Header &h, const char *p, Buffer &out, std::string *why);
    bool on_read_req(const Header &h, const char *p, Buffer &out, std::string *why);
    bool on_write_data(const Header &h, const char *p, Buffer &out, std::string *why);
    bool on_read_data(const Header &h, const char *p, std::string *why);
    bool on_done(const Header &h, const char *p, std::string *why);
    /// 0, or -TW_EREMOTEACCESS with why, for an access to [offset, offset+len).
    int check_access(uint64_t id, uint64_t key, uint64_t offset, uint64_t len, uint32_t mode, std::string *why) const;
    void answer(Buffer &out, Frame type, uint64_t tag, int status, const std::string &reason);
    void forget_peer();
    void complete(Op &op, int status, std::string reason);

    Buffer wire_in_;
    bool hello_seen_ = false;
    bool peer_end_ = false;
    bool held_ = false;
    ssize_t transport_end_ = 1; ///< > 0: none kept
    uint64_t data_left_ = 0;    ///< payload bytes of the current data frame still to come
    uint64_t next_id_ = 1;
    uint64_t next_tag_ = 1;
    std::unordered_map<uint64_t, Exposure> exposures_;
    std::unordered_map<uint64_t, Op> ops_;
    std::deque<Turn> turns_;
    size_t serving_ = 0; ///< turns_ that serve the peer's reads
    std::deque<Request> read_requests_;
    /// Writes from the peer with a refused chunk: the status its last chunk answers.
    std::map<uint64_t, std::pair<int, std::string>> refused_writes_;
    std::vector<std::function<void()>> completions_;
    std::vector<char> frame_; ///< one frame's payload, contiguous
};

} // namespace twinwire::rma
