// nccom-simulate-engine: one steady state of a set of network flows, solved
// by SimGrid (S4U, the CM02 max-min fair sharing model), for
// `nccom-rings simulate` (cmd/nccom-rings/simulate, docs/simulate.md).
//
// Input (a file named on the command line, or stdin), one item a line,
// '#' comments:
//   link NAME BYTES_PER_SECOND
//   flow NAME LINK [LINK...]
// A flow crosses its links in order. Flows are not merged: S4U sets no
// penalty on a communication, so one action cannot stand for several
// without changing its share of a link.
//
// Output, one line each, in input order:
//   flow NAME BYTES_PER_SECOND
//   link NAME USED_BYTES_PER_SECOND CAPACITY
// then "done". Exit 0, or 2 with a line on stderr for input it cannot use.
//
// How: every flow is one host of a star zone whose route to the centre is
// its links; one sink host behind a fat pipe receives them all. Every
// flow starts at once with a size no flow can finish in the window; the
// rate is the bytes moved between two instants after the sink's latency
// (the one latency in the model, so that every action has the same
// penalty) has passed.
#include <simgrid/s4u.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Flow {
  std::string name;
  std::vector<std::string> links;
  sg4::Host* host = nullptr;
  sg4::CommPtr comm;
  double before = 0, after = 0;
};

[[noreturn]] void unusable(int line, const std::string& why) {
  std::fprintf(stderr, "nccom-simulate-engine: line %d: %s\n", line, why.c_str());
  std::exit(2);
}

// The size of every flow: more than any rate below 1e13 bytes/s moves in
// the window, and small enough that a double counts its remaining bytes
// to within 0.02 of a byte.
constexpr double kSize = 1e14;
// The sink's latency, and the window in which rates are read.
constexpr double kLatency = 1e-6, kT1 = 1.0, kT2 = 2.0;

}  // namespace

int main(int argc, char* argv[]) {
  // CM02 without its refinements: no TCP window bound, no RTT weighting,
  // no reverse cross-traffic; plain max-min fair sharing. Full, not the
  // default Lazy, update: under Lazy an action's remaining bytes are
  // brought up to date only at its events, so reading them mid-transfer
  // gave rates above a link's capacity (TestEngineIsMaxMinFair).
  std::vector<std::string> cfg = {"--cfg=network/model:CM02", "--cfg=network/TCP-gamma:0",
                                  "--cfg=network/weight-S:0", "--cfg=network/crosstraffic:0", "--cfg=network/optim:Full",
                                  "--log=root.thresh:critical"};
  std::string input;
  std::vector<char*> args = {argv[0]};
  for (auto& c : cfg) args.push_back(c.data());
  for (int i = 1; i < argc; i++) input = argv[i];
  int n = static_cast<int>(args.size());
  sg4::Engine e(&n, args.data());

  std::ifstream file;
  if (!input.empty()) {
    file.open(input);
    if (!file) {
      std::fprintf(stderr, "nccom-simulate-engine: cannot open %s\n", input.c_str());
      return 2;
    }
  }
  std::istream& in = input.empty() ? std::cin : file;

  auto* zone = sg4::create_star_zone("net");
  std::map<std::string, sg4::Link*> links;
  std::vector<std::string> linkOrder;
  std::vector<Flow> flows;
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    line++;
    if (auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::string kind;
    if (!(words >> kind)) continue;
    if (kind == "link") {
      std::string name;
      double bw = 0;
      if (!(words >> name >> bw) || bw <= 0) unusable(line, "link NAME BYTES_PER_SECOND (> 0) expected");
      if (links.count(name)) unusable(line, "link " + name + " given twice");
      links[name] = zone->create_link(name, bw)->set_latency(0)->seal();
      linkOrder.push_back(name);
    } else if (kind == "flow") {
      Flow f;
      if (!(words >> f.name)) unusable(line, "flow NAME LINK... expected");
      std::string l;
      while (words >> l) {
        if (!links.count(l)) unusable(line, "flow " + f.name + ": no link " + l + " above");
        f.links.push_back(l);
      }
      if (f.links.empty()) unusable(line, "flow " + f.name + " crosses no link");
      flows.push_back(std::move(f));
    } else {
      unusable(line, "unknown item " + kind);
    }
  }
  if (flows.empty()) unusable(line, "no flow");

  // The sink: a fat pipe (never shared) carrying the one latency.
  auto* pipe = zone->create_link("sink-pipe", 1e30)->set_latency(kLatency);
  pipe->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
  pipe->seal();
  auto* sink = zone->create_host("sink", 1e9);
  zone->add_route(nullptr, sink->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute(pipe)}, false);
  for (size_t i = 0; i < flows.size(); i++) {
    auto& f = flows[i];
    f.host = zone->create_host("f" + std::to_string(i), 1e9);
    std::vector<sg4::LinkInRoute> route;
    for (auto& l : f.links) route.emplace_back(links[l]);
    zone->add_route(f.host->get_netpoint(), nullptr, nullptr, nullptr, route, false);
  }
  zone->seal();

  std::map<std::string, double> usage;
  sg4::Actor::create("observer", sink, [&flows, &links, &linkOrder, &usage]() {
    for (auto& f : flows) {
      f.comm = sg4::Comm::sendto_init(f.host, sg4::Host::by_name("sink"));
      f.comm->set_payload_size(static_cast<uint64_t>(kSize));
      f.comm->start();
    }
    sg4::this_actor::sleep_until(kT1);
    for (auto& f : flows) f.before = f.comm->get_remaining();
    sg4::this_actor::sleep_until(kT2);
    for (auto& f : flows) f.after = f.comm->get_remaining();
    for (auto& name : linkOrder) usage[name] = links[name]->get_usage();
    for (auto& f : flows) f.comm->cancel();
  });
  e.run_until(kT2 + 1);

  std::cout.precision(12);
  for (auto& f : flows) std::cout << "flow " << f.name << " " << (f.before - f.after) / (kT2 - kT1) << "\n";
  for (auto& name : linkOrder)
    std::cout << "link " << name << " " << usage[name] << " " << links[name]->get_bandwidth() << "\n";
  std::cout << "done\n";
  return 0;
}
