// interop_main.cc — rocemu-interop: one rocemu RoCEv2 endpoint (nic::RoceHost) on a DPDK port,
// talking to a real RoCEv2 stack (Linux rdma_rxe in the QEMU guest of scripts/interop/).
//
// usage: rocemu-interop MODE [options]
//   MODE pingpong-server | pingpong-client   ibv_rc_pingpong's protocol (the guest runs
//                                            `ibv_rc_pingpong -g 1 [server]`; --transport
//                                            uc|ud: ibv_uc_pingpong / ibv_ud_pingpong)
//   MODE rdma-check                          RDMA WRITE + READ + SEND each way, data verified
//                                            (the guest runs guest_rdma_check)
//   MODE perftest-server                     passive server of --iters consecutive perftest
//                                            clients (ib_write_bw / ib_read_bw -x 1)
//   MODE rping-server | rping-client         librdmacm's rping over rdma_cm (the peer runs
//                                            `rping -c|-s -a ADDR -C N -S SIZE`)
// options: rocemu-interop --help (kHelp below; defaults match scripts/interop/run_guest.sh).
// Exit: 0 success, 1 failed check, 2 usage error, 3 setup error (EAL, port).
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "apps/interop/endpoint.h"
#include "apps/interop/scenarios.h"
#include "apps/interop/side_channel.h"
#include "common/config.h"
#include "fabric/eal.h"

using namespace rocemu;
using namespace rocemu::interop;

namespace {
constexpr const char* kHelp =
    "usage: rocemu-interop MODE [--option value]...\n"
    "One rocemu RoCEv2 endpoint on a DPDK port (af_packet or af_xdp on --iface) against a real\n"
    "RoCEv2 stack, e.g. Linux rdma_rxe in scripts/interop/'s QEMU guest (docs/interop.md).\n"
    "\n"
    "MODE\n"
    "  pingpong-server | pingpong-client  ibv_rc_pingpong's protocol (the peer runs\n"
    "                                     `ibv_rc_pingpong -g 1 [server]`, or -g 0 with\n"
    "                                     --gid-index 0; with --transport uc|ud:\n"
    "                                     ibv_uc_pingpong / ibv_ud_pingpong)\n"
    "  rdma-check                         RDMA WRITE + READ + SEND each way, data verified\n"
    "                                     (the peer runs guest_rdma_check)\n"
    "  perftest-server                    passive server of --iters consecutive perftest\n"
    "                                     clients (ib_write_bw / ib_read_bw -x 1)\n"
    "  rping-server | rping-client        librdmacm's rping over rdma_cm, no side channel (the\n"
    "                                     peer runs `rping -c -a OUR_IP` or `rping -s`)\n"
    "\n"
    "options (default)\n"
    "  --iface NAME (veth-dpdk)           the kernel interface the DPDK port opens\n"
    "  --vdev-kind af_packet|af_xdp (af_packet)\n"
    "  --ip A.B.C.D (10.77.0.2)           our RoCE address, answered by ARP here\n"
    "  --mac MAC (02:00:0a:4d:00:02)      our MAC\n"
    "  --peer-ip A.B.C.D (10.77.0.10)     the peer's RoCE address\n"
    "  --peer-mac MAC (52:54:00:77:00:10)\n"
    "  --side-ip A.B.C.D (10.77.0.1)      where the server listens for the TCP side channel\n"
    "  --iters N (1000)                   pingpong round trips; perftest-server: clients served\n"
    "  --size BYTES (4096)                pingpong message size (ud: at most the MTU, 1024);\n"
    "                                     rping: -S, 24..65535 (rping's own default is 64)\n"
    "  --port N (7174)                    rping: the rdma_cm port (rping's -p)\n"
    "  --count N (10)                     rping: pings (-C); the server checks it served N\n"
    "  --verbose 0|1 (0)                  rping: print each ping's data (-v)\n"
    "  --transport rc|uc|ud (rc)          pingpong QP type: ibv_rc/uc/ud_pingpong's peer\n"
    "  -g, --gid-index N (1)              pingpong (rc, uc): our GID, as rxe numbers them: 1\n"
    "                                     IPv4-mapped, 0 the IPv6 link-local fe80:: of --mac\n"
    "                                     (Neighbor Solicitations for it answered here)\n"
    "  --bytes BYTES (1048576)            rdma-check region size, a multiple of 8\n"
    "  --seed N (7)                       rdma-check data pattern; the NIC's random stream\n"
    "  --rate-gbps G (0 = unpaced)        pace our sends\n"
    "  --ack-timeout EXP (14)             local ACK timeout, 4.096 us x 2^EXP, EXP in 0..31\n"
    "  --timeout-s S (60)                 give up (exit 1) after S seconds\n"
    "  --drop-read-responses P (0)        rdma-check only: drop a seeded fraction P < 0.5 of the\n"
    "                                     READ responses received, as a lossy link would; the\n"
    "                                     check then also requires some dropped and recovered\n"
    "  -h, --help                         this text\n"
    "\n"
    "exit: 0 success, 1 failed check, 2 usage error, 3 setup error (EAL, port)\n";

int usage(const std::string& why) {
  std::fprintf(stderr,
               "rocemu-interop: %s\nusage: rocemu-interop "
               "pingpong-server|pingpong-client|rdma-check|perftest-server|rping-server|"
               "rping-client [--option value]...\n"
               "(rocemu-interop --help lists the options)\n",
               why.c_str());
  return kExitUsage;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage("no mode");
  const std::string mode = argv[1];
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") {
      std::fputs(kHelp, stdout);
      return 0;
    }
  }
  if (mode != "pingpong-server" && mode != "pingpong-client" && mode != "rdma-check" &&
      mode != "perftest-server" && mode != "rping-server" && mode != "rping-client")
    return usage("unknown mode '" + mode + "'");
  std::map<std::string, std::string> o = {{"iface", "veth-dpdk"},
                                          {"vdev-kind", "af_packet"},
                                          {"ip", "10.77.0.2"},
                                          {"mac", "02:00:0a:4d:00:02"},
                                          {"peer-ip", "10.77.0.10"},
                                          {"peer-mac", "52:54:00:77:00:10"},
                                          {"side-ip", "10.77.0.1"},
                                          {"iters", "1000"},
                                          {"size", "4096"},
                                          {"bytes", "1048576"},
                                          {"seed", "7"},
                                          {"rate-gbps", "0"},
                                          {"ack-timeout", "14"},
                                          {"timeout-s", "60"},
                                          {"drop-read-responses", "0"},
                                          {"transport", "rc"},
                                          {"port", "7174"},
                                          {"count", "10"},
                                          {"verbose", "0"},
                                          {"gid-index", "1"}};
  for (int i = 2; i < argc; i += 2) {
    std::string k = argv[i];
    if (k == "-g") k = "--gid-index";
    if (k.rfind("--", 0) != 0 || !o.count(k.substr(2)) || i + 1 >= argc)
      return usage("bad option '" + k + "'");
    o[k.substr(2)] = argv[i + 1];
  }
  EndpointAddress self, peer;
  const auto ip = parse_ipv4(o["ip"]), peer_ip = parse_ipv4(o["peer-ip"]);
  if (!ip || !peer_ip) return usage("--ip/--peer-ip must be dotted quads");
  const auto mac = parse_mac(o["mac"]), peer_mac = parse_mac(o["peer-mac"]);
  if (!mac || !peer_mac) return usage("--mac/--peer-mac must be aa:bb:cc:dd:ee:ff");
  self.mac = *mac;
  peer.mac = *peer_mac;
  if (o["vdev-kind"] != "af_packet" && o["vdev-kind"] != "af_xdp")
    return usage("--vdev-kind must be af_packet or af_xdp");
  self.ipv4 = *ip;
  peer.ipv4 = *peer_ip;
  ScenarioOptions so;
  try {
    so.iters = static_cast<uint32_t>(std::stoul(o["iters"]));
    so.size_bytes = static_cast<uint32_t>(std::stoul(o["size"]));
    so.bytes = static_cast<uint32_t>(std::stoul(o["bytes"]));
    so.seed = std::stoull(o["seed"]);
    so.rate_bps = static_cast<uint64_t>(std::stod(o["rate-gbps"]) * 1e9);
    so.timeout_ms = std::stoi(o["timeout-s"]) * 1000;
    so.ack_timeout = std::stoi(o["ack-timeout"]);
    so.read_response_loss = std::stod(o["drop-read-responses"]);
    const unsigned long port = std::stoul(o["port"]);
    if (port == 0 || port > 65535) return usage("--port must be 1..65535");
    so.port = static_cast<uint16_t>(port);
    so.count = static_cast<uint32_t>(std::stoul(o["count"]));
    so.verbose = std::stoi(o["verbose"]) != 0;
    so.gid_index = std::stoi(o["gid-index"]);
  } catch (const std::exception&) {
    return usage("numeric option out of range");
  }
  if (so.ack_timeout < 0 || so.ack_timeout > 31) return usage("--ack-timeout must be 0..31");
  if (so.gid_index < 0 || so.gid_index > 1)
    return usage("--gid-index must be 0 (IPv6 link-local) or 1 (IPv4-mapped)");
  if (so.gid_index != 1 && mode.rfind("pingpong", 0) != 0)
    return usage("--gid-index is for the pingpong modes");
  if (!(so.read_response_loss >= 0 && so.read_response_loss < 0.5))
    return usage("--drop-read-responses must be in [0, 0.5)");
  if (so.read_response_loss > 0 && mode != "rdma-check")
    return usage("--drop-read-responses is for rdma-check");
  if (so.iters == 0 || so.size_bytes == 0 || so.bytes == 0 || so.bytes % 8 || so.timeout_ms <= 0)
    return usage("--iters/--size/--bytes/--timeout-s must be positive (--bytes a multiple of 8)");
  if (o["transport"] != "rc" && o["transport"] != "uc" && o["transport"] != "ud")
    return usage("--transport must be rc, uc or ud");
  if (o["transport"] != "rc" && mode != "pingpong-server" && mode != "pingpong-client")
    return usage("--transport is for pingpong-server and pingpong-client");
  so.transport = o["transport"] == "uc"   ? IBV_QPT_UC
                 : o["transport"] == "ud" ? IBV_QPT_UD
                                          : IBV_QPT_RC;
  so.side_ip = o["side-ip"];
  so.peer_side_ip = o["peer-ip"];
  so.peer_roce_ipv4 = peer.ipv4;
  so.server = mode != "pingpong-client" && mode != "rping-client";
  const bool rping = mode == "rping-server" || mode == "rping-client";
  if (rping && so.count == 0) return usage("--count must be positive");

  std::unique_ptr<Endpoint> ep;
  std::unique_ptr<nic::RoceHost> host;
  try {
    fabric::EalOptions eo;  // the apps' one EAL bootstrap; the engine opens the port
    eo.program = "rocemu-interop";
    eo.no_huge_memory_mb = 256;
    eo.user_args = {"--log-level", "lib.eal:warning"};
    fabric::eal_start(eo);
    EndpointPort port;
    port.iface = o["iface"];
    port.backend =
        o["vdev-kind"] == "af_xdp" ? fabric::PortBackend::kAfXdp : fabric::PortBackend::kAfPacket;
    ep = std::make_unique<Endpoint>(port, self, peer);
    nic::NicParams np;
    np.max_read_jobs = 128;  // perftest's ib_read_bw asks for 128 outstanding READs (out_reads)
    np.random_qpns = true;   // as the perftest tools: not 0x11, 0x12, ...
    host = std::make_unique<nic::RoceHost>(np, ep->topology(), 0, ep->pool(), so.seed);
    ep->attach(*host);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-interop: setup failed: %s\n", e.what());
    return 3;
  }
  int rc = 1;
  try {
    if (so.read_response_loss > 0) ep->set_read_response_loss(so.read_response_loss, so.seed);
    rc = mode == "rdma-check"        ? run_rdma_check(*ep, *host, so)
         : mode == "perftest-server" ? run_perftest_server(*ep, *host, so)
         : rping                     ? run_rping(*ep, *host, so)
                                     : run_pingpong(*ep, *host, so);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rocemu-interop: %s\n", e.what());
    rc = 1;
  }
  std::fflush(stdout);
  host.reset();  // frees its mbufs before the engine's pool goes
  ep.reset();
  return rc;
}
