// SPDX-License-Identifier: MIT
// A foreign RDMA client for the handshake tests: connects with rdma_cm to a
// twinwire RDMA listener with a hello twinwire's own client never sends,
// and reports how the server answered.  Test-only; links librdmacm.
//
//   rdma-handshake-probe MODE SERVER_IP PORT [SOURCE_IP]
//   MODE: garbage (16 bytes that are no hello), version (speaks only 9..9),
//         features (requires feature bit 31)
// Prints "rejected: reason=N text=..." and exits 0 when the server refused
// with a twinwire reject; anything else is printed and exits 1.
#include "wire.hpp"

#include <rdma/rdma_cma.h>

#include <arpa/inet.h>
#include <poll.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace twrdma;

namespace {

int fail(const char *what)
{
    std::printf("error: %s: %s\n", what, std::strerror(errno));
    return 1;
}

bool parse_ip(const char *text, uint16_t port, sockaddr_in *out)
{
    std::memset(out, 0, sizeof *out);
    out->sin_family = AF_INET;
    out->sin_port = htons(port);
    return inet_pton(AF_INET, text, &out->sin_addr) == 1;
}

/// Waits up to 20 s for the next CM event; nullptr on timeout.
rdma_cm_event *next_event(rdma_event_channel *ch)
{
    pollfd p{ch->fd, POLLIN, 0};
    if (poll(&p, 1, 20000) != 1) return nullptr;
    rdma_cm_event *ev = nullptr;
    return rdma_get_cm_event(ch, &ev) == 0 ? ev : nullptr;
}

/// The private data of the connect request for `mode`; empty when unknown.
std::string hello_for(const std::string &mode)
{
    WireHello h{};
    h.magic = kHelloMagic;
    h.proto_min = kProtoMin;
    h.proto_max = kProtoMax;
    h.rkey = 1;
    h.ring_addr = 4096;
    h.ring_size = 65536;
    h.recv_depth = 16;
    h.credit_reserve = 2;
    if (mode == "garbage") return std::string(16, '\x5a');
    if (mode == "version") h.proto_min = h.proto_max = 9;
    else if (mode == "features") h.features = 1u << 31;
    else return "";
    WireHello wire = hello_to_wire(h);
    return std::string(reinterpret_cast<const char *>(&wire), sizeof wire);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s garbage|version|features SERVER_IP PORT [SOURCE_IP]\n", argv[0]);
        return 2;
    }
    std::string pdata = hello_for(argv[1]);
    sockaddr_in dst{}, src{};
    if (pdata.empty() || !parse_ip(argv[2], static_cast<uint16_t>(std::atoi(argv[3])), &dst) ||
        (argc > 4 && !parse_ip(argv[4], 0, &src))) {
        std::fprintf(stderr, "%s: bad mode or address\n", argv[0]);
        return 2;
    }
    rdma_event_channel *ch = rdma_create_event_channel();
    if (!ch) return fail("rdma_create_event_channel");
    rdma_cm_id *id = nullptr;
    if (rdma_create_id(ch, &id, nullptr, RDMA_PS_TCP)) return fail("rdma_create_id");
    sockaddr *source = argc > 4 ? reinterpret_cast<sockaddr *>(&src) : nullptr;
    auto resolve = [&] { return rdma_resolve_addr(id, source, reinterpret_cast<sockaddr *>(&dst), 5000); };
    if (resolve()) return fail("rdma_resolve_addr");
    // The kernel may need several address steps for a new neighbour.
    rdma_cm_event *ev = nullptr;
    for (int attempt = 0; attempt < 10; attempt++) {
        ev = next_event(ch);
        if (!ev || ev->event != RDMA_CM_EVENT_ADDR_ERROR) break;
        rdma_ack_cm_event(ev);
        ev = nullptr;
        if (resolve()) return fail("rdma_resolve_addr");
    }
    if (!ev || ev->event != RDMA_CM_EVENT_ADDR_RESOLVED) {
        std::printf("error: address not resolved (%s)\n", ev ? rdma_event_str(ev->event) : "no event");
        return 1;
    }
    rdma_ack_cm_event(ev);
    if (rdma_resolve_route(id, 5000)) return fail("rdma_resolve_route");
    ev = next_event(ch);
    if (!ev || ev->event != RDMA_CM_EVENT_ROUTE_RESOLVED) {
        std::printf("error: route not resolved (%s)\n", ev ? rdma_event_str(ev->event) : "no event");
        return 1;
    }
    rdma_ack_cm_event(ev);

    // No QP: the server must refuse on the hello alone, before it builds one.
    rdma_conn_param param{};
    param.private_data = pdata.data();
    param.private_data_len = static_cast<uint8_t>(pdata.size());
    param.qp_num = 0x123;
    param.responder_resources = 1;
    param.initiator_depth = 1;
    param.retry_count = 7;
    if (rdma_connect(id, &param)) return fail("rdma_connect");
    ev = next_event(ch);
    if (!ev) {
        std::printf("error: no answer to the connect request\n");
        return 1;
    }
    RejectReason reason{};
    std::string text;
    int rc = 1;
    if (ev->event == RDMA_CM_EVENT_REJECTED &&
        reject_from_wire(ev->param.conn.private_data, ev->param.conn.private_data_len, &reason, &text)) {
        std::printf("rejected: reason=%u text=%s\n", static_cast<unsigned>(reason), text.c_str());
        rc = 0;
    } else {
        std::printf("unexpected: %s (status %d)\n", rdma_event_str(ev->event), ev->status);
    }
    rdma_ack_cm_event(ev);
    rdma_destroy_id(id);
    rdma_destroy_event_channel(ch);
    return rc;
}
