// SPDX-License-Identifier: MIT
// Check a plugin's vtable and fill its optional members with stubs, so call
// sites never test for NULL (the rdma-core dummy_ops idea).
#include "ops_normalise.hpp"

#include <cerrno>
#include <cstring>

namespace twinwire {
namespace {

int stub_probe(const tw_host *, char *, size_t) { return -EOPNOTSUPP; }
int stub_describe(tw_transport *, char *, size_t) { return -EOPNOTSUPP; }
int stub_has_pending(tw_transport_loop *) { return 0; }
int stub_process_pending(tw_transport_loop *) { return 0; }
int stub_listener_addr(tw_listener *, struct sockaddr *, uint32_t *) { return -EOPNOTSUPP; }
int stub_shutdown(tw_conn *, int) { return -EOPNOTSUPP; }
int stub_addr(tw_conn *, struct sockaddr *, uint32_t *) { return -EOPNOTSUPP; }
int stub_get_stats(tw_conn *, tw_conn_stats *) { return -EOPNOTSUPP; }
const char *stub_strerror(int) { return nullptr; }
int stub_send_buf_get(tw_conn *, size_t, tw_buf *) { return -EOPNOTSUPP; }
int stub_send_buf_submit(tw_conn *, tw_buf *) { return -EOPNOTSUPP; }
int stub_recv_buf_borrow(tw_conn *, tw_buf *) { return -EOPNOTSUPP; }
int stub_recv_buf_return(tw_conn *, tw_buf *, size_t) { return -EOPNOTSUPP; }
int stub_ctrl(tw_transport *, tw_conn *, const char *, uint32_t, void *, size_t) { return -EOPNOTSUPP; }
int stub_check_config(const tw_host *, char *, size_t) { return -EOPNOTSUPP; }
int stub_rma_expose(tw_conn *, void *, size_t, uint32_t, tw_rma_exposure **, void *, size_t *) { return -EOPNOTSUPP; }
int stub_rma_revoke(tw_rma_exposure *, tw_rma_cb, void *) { return -EOPNOTSUPP; }
int stub_rma_post(tw_conn *, const tw_rma_request *) { return -EOPNOTSUPP; }
int stub_rma_mem_get(tw_conn *, size_t, tw_buf *) { return -EOPNOTSUPP; }
int stub_rma_mem_put(tw_conn *, tw_buf *) { return -EOPNOTSUPP; }

template <class F> void fill(F &member, F stub)
{
    if (!member) member = stub;
}

} // namespace

std::string normalise_ops(const tw_transport_ops *ops, tw_transport_ops *out)
{
    if (!ops) return "the plugin has no operations table";
    // Any table of ABI 1 will do, smaller or larger than this host's: the
    // whole 1.0 table must be there, members past the plugin's size do not
    // exist for it (they stay NULL here, then get stubs), and members this
    // host does not know are never looked at.  `version` decides nothing.
    if (ops->size < TW_TRANSPORT_OPS_SIZE_V1)
        return "operations table is " + std::to_string(ops->size) + " bytes, smaller than the " +
               std::to_string(TW_TRANSPORT_OPS_SIZE_V1) + " bytes of ABI 1.0";
    std::memset(out, 0, sizeof *out);
    std::memcpy(out, ops, ops->size < sizeof *out ? ops->size : sizeof *out);
    out->size = sizeof *out;
    if (!out->name || !*out->name) return "operations table has no name";

    struct Required {
        const void *fn;
        const char *name;
    };
    const Required required[] = {
        {reinterpret_cast<const void *>(out->init), "init"},
        {reinterpret_cast<const void *>(out->fini), "fini"},
        {reinterpret_cast<const void *>(out->loop_attach), "loop_attach"},
        {reinterpret_cast<const void *>(out->loop_detach), "loop_detach"},
        {reinterpret_cast<const void *>(out->listen), "listen"},
        {reinterpret_cast<const void *>(out->accept), "accept"},
        {reinterpret_cast<const void *>(out->listener_close), "listener_close"},
        {reinterpret_cast<const void *>(out->connect), "connect"},
        {reinterpret_cast<const void *>(out->set_callback), "set_callback"},
        {reinterpret_cast<const void *>(out->set_events), "set_events"},
        {reinterpret_cast<const void *>(out->read), "read"},
        {reinterpret_cast<const void *>(out->readv), "readv"},
        {reinterpret_cast<const void *>(out->write), "write"},
        {reinterpret_cast<const void *>(out->writev), "writev"},
        {reinterpret_cast<const void *>(out->close), "close"},
        {reinterpret_cast<const void *>(out->get_error), "get_error"},
        {reinterpret_cast<const void *>(out->last_error), "last_error"},
    };
    for (const Required &r : required)
        if (!r.fn) return std::string("missing required operation '") + r.name + "'";

    // A capability is a promise about operations: refuse one made without them.
    struct Claimed {
        uint64_t cap;
        const char *cap_name;
        const void *fn;
        const char *name;
    };
    const Claimed claimed[] = {
        {TW_CAP_HALF_CLOSE, "TW_CAP_HALF_CLOSE", reinterpret_cast<const void *>(out->shutdown), "shutdown"},
        {TW_CAP_PENDING_DATA, "TW_CAP_PENDING_DATA", reinterpret_cast<const void *>(out->has_pending_data),
         "has_pending_data"},
        {TW_CAP_PENDING_DATA, "TW_CAP_PENDING_DATA", reinterpret_cast<const void *>(out->process_pending_data),
         "process_pending_data"},
        {TW_CAP_ZERO_COPY_SEND, "TW_CAP_ZERO_COPY_SEND", reinterpret_cast<const void *>(out->send_buf_get),
         "send_buf_get"},
        {TW_CAP_ZERO_COPY_SEND, "TW_CAP_ZERO_COPY_SEND", reinterpret_cast<const void *>(out->send_buf_submit),
         "send_buf_submit"},
        {TW_CAP_ZERO_COPY_RECV, "TW_CAP_ZERO_COPY_RECV", reinterpret_cast<const void *>(out->recv_buf_borrow),
         "recv_buf_borrow"},
        {TW_CAP_ZERO_COPY_RECV, "TW_CAP_ZERO_COPY_RECV", reinterpret_cast<const void *>(out->recv_buf_return),
         "recv_buf_return"},
        {TW_CAP_RMA, "TW_CAP_RMA", reinterpret_cast<const void *>(out->rma_expose), "rma_expose"},
        {TW_CAP_RMA, "TW_CAP_RMA", reinterpret_cast<const void *>(out->rma_revoke), "rma_revoke"},
        {TW_CAP_RMA, "TW_CAP_RMA", reinterpret_cast<const void *>(out->rma_post), "rma_post"},
    };
    for (const Claimed &c : claimed)
        if ((out->caps & c.cap) && !c.fn)
            return std::string("claims ") + c.cap_name + " without the operation '" + c.name + "'";

    fill(out->probe, stub_probe);
    fill(out->describe, stub_describe);
    fill(out->has_pending_data, stub_has_pending);
    fill(out->process_pending_data, stub_process_pending);
    fill(out->listener_addr, stub_listener_addr);
    fill(out->shutdown, stub_shutdown);
    fill(out->local_addr, stub_addr);
    fill(out->peer_addr, stub_addr);
    fill(out->get_stats, stub_get_stats);
    fill(out->strerror, stub_strerror);
    fill(out->send_buf_get, stub_send_buf_get);
    fill(out->send_buf_submit, stub_send_buf_submit);
    fill(out->recv_buf_borrow, stub_recv_buf_borrow);
    fill(out->recv_buf_return, stub_recv_buf_return);
    fill(out->ctrl, stub_ctrl);
    fill(out->check_config, stub_check_config);
    // ABI 1.3.  A plugin of 1.2 or older has none of them: stubs.
    fill(out->rma_expose, stub_rma_expose);
    fill(out->rma_revoke, stub_rma_revoke);
    fill(out->rma_post, stub_rma_post);
    fill(out->rma_mem_get, stub_rma_mem_get);
    fill(out->rma_mem_put, stub_rma_mem_put);
    return {};
}

} // namespace twinwire
