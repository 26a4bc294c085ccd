// SPDX-License-Identifier: MIT
#include "rma_native.hpp"

#include <twinwire/error.hpp>

#include <cerrno>

namespace twinwire::rma {

Native::Native(const tw_transport_ops &ops, tw_conn *conn, std::function<void()> run, std::function<void()> wake)
    : ops_table_(ops), conn_(conn), run_(std::move(run)), wake_(std::move(wake))
{
}

Native::~Native() { detach(); }

std::string Native::last_error() const
{
    const char *text = conn_ ? ops_table_.last_error(conn_) : nullptr;
    return text ? text : "";
}

void Native::queue(std::function<void()> fn)
{
    completions_.push_back(std::move(fn));
    if (completions_.size() == 1 && wake_) wake_();
}

void Native::deliver(std::function<void()> fn)
{
    completions_.push_back(std::move(fn));
    if (run_) run_(); // may close the connection: nothing of this call after it
}

int Native::expose(void *data, size_t len, uint32_t access, uint64_t *id, std::string *descriptor, std::string *why)
{
    if (!conn_) return *why = "the connection is closed", -ENOTCONN;
    tw_rma_exposure *handle = nullptr;
    char desc[TW_RMA_DESC_MAX];
    size_t desc_len = 0;
    int rc = ops_table_.rma_expose(conn_, data, len, access, &handle, desc, &desc_len);
    if (rc < 0 || !handle || desc_len > TW_RMA_DESC_MAX) {
        *why = "rma_expose: " + last_error();
        return rc < 0 ? rc : -EPROTO;
    }
    *id = next_id_++;
    exposures_.emplace(*id, Exposure{handle, {}, false});
    descriptor->assign(desc, desc_len);
    return 0;
}

int Native::post(uint32_t op, std::string_view descriptor, uint64_t offset, void *local, size_t len, RmaCallback done,
                 std::string *why)
{
    if (!conn_) return *why = "the connection is closed", -ENOTCONN;
    if (!done) return *why = "no completion callback", -EINVAL;
    auto *ctx = new Op{this, std::move(done)};
    Waiting w{op, std::string(descriptor), offset, local, len, ctx};
    // Behind operations already waiting for room, in order.
    int rc = waiting_.empty() ? submit(w) : -EAGAIN;
    if (rc == -EAGAIN) {
        waiting_.push_back(std::move(w));
        rc = 0;
    }
    if (rc < 0) {
        *why = last_error();
        if (why->empty()) *why = "rma_post refused it";
        delete ctx;
        return rc;
    }
    ops_.insert(ctx);
    return 0;
}

int Native::submit(const Waiting &w)
{
    tw_rma_request req{};
    req.size = sizeof req;
    req.op = w.op;
    req.desc = w.descriptor.data();
    req.desc_len = static_cast<uint32_t>(w.descriptor.size());
    req.offset = w.offset;
    req.local = w.local;
    req.len = w.len;
    req.cb = on_done;
    req.arg = w.ctx;
    return ops_table_.rma_post(conn_, &req);
}

void Native::retry()
{
    while (!waiting_.empty() && conn_) {
        Waiting &w = waiting_.front();
        int rc = w.ctx->dropped ? 0 : submit(w);
        if (rc == -EAGAIN) return;
        Op *ctx = w.ctx;
        waiting_.pop_front();
        if (rc < 0 || ctx->dropped) {
            // Accepted by the API, so its callback runs (unless close() dropped it).
            ops_.erase(ctx);
            if (!ctx->dropped && ctx->done) {
                std::error_code code = code_from_transport(rc);
                std::string reason = last_error();
                RmaCallback done = std::move(ctx->done);
                queue([done, code, reason] { done(code, reason); });
            }
            delete ctx;
        }
    }
}

void Native::on_done(void *arg, int status)
{
    auto *ctx = static_cast<Op *>(arg);
    Native *self = ctx->self;
    self->ops_.erase(ctx);
    if (!ctx->dropped && ctx->done) {
        std::error_code code = status ? code_from_transport(status) : std::error_code();
        std::string reason = status ? self->last_error() : std::string();
        if (status && reason.empty()) reason = code.message();
        RmaCallback done = std::move(ctx->done);
        delete ctx;
        self->deliver([done, code, reason] { done(code, reason); });
        return;
    }
    delete ctx;
}

void Native::revoke(uint64_t id, std::function<void()> done)
{
    auto it = exposures_.find(id);
    if (it == exposures_.end() || it->second.revoking || !conn_) {
        if (done) queue(std::move(done));
        return;
    }
    it->second.revoking = true;
    it->second.revoked = std::move(done);
    auto *r = new Revocation{this, id};
    if (ops_table_.rma_revoke(it->second.handle, on_revoked, r) < 0) {
        delete r;
        std::function<void()> fn = std::move(it->second.revoked);
        exposures_.erase(it);
        if (fn) queue(std::move(fn));
        return;
    }
    revocations_.insert(r);
}

void Native::on_revoked(void *arg, int)
{
    auto *r = static_cast<Revocation *>(arg);
    Native *self = r->self;
    self->revocations_.erase(r);
    auto it = self->exposures_.find(r->id);
    delete r;
    if (it != self->exposures_.end()) {
        std::function<void()> fn = std::move(it->second.revoked);
        self->exposures_.erase(it);
        if (fn) self->deliver(std::move(fn));
    }
}

std::vector<std::function<void()>> Native::take_completions()
{
    std::vector<std::function<void()>> out;
    out.swap(completions_);
    return out;
}

void Native::withdraw_all()
{
    for (Op *op : ops_) op->dropped = true;
    std::vector<uint64_t> ids;
    for (auto &e : exposures_)
        if (!e.second.revoking) ids.push_back(e.first);
    for (uint64_t id : ids) revoke(id, {});
}

void Native::fail_all(std::error_code code, const std::string &reason)
{
    for (Op *op : ops_) {
        if (op->dropped || !op->done) continue;
        op->dropped = true;
        RmaCallback done = std::move(op->done);
        queue([done, code, reason] { done(code, reason); });
    }
}

void Native::detach()
{
    // The transport freed its exposures and will call nothing back: the
    // contexts are ours to free, and waiting revocations are done.
    for (Op *op : ops_) delete op;
    ops_.clear();
    waiting_.clear();
    for (Revocation *r : revocations_) delete r;
    revocations_.clear();
    for (auto &e : exposures_)
        if (e.second.revoked) completions_.push_back(std::move(e.second.revoked));
    exposures_.clear();
    conn_ = nullptr;
}

} // namespace twinwire::rma
