// bottleneck_sim.cc — event-driven single-bottleneck DCQCN model (see bottleneck_sim.h).
#include "tests/dcqcn/bottleneck_sim.h"

#include <algorithm>
#include <deque>
#include <queue>

#include "common/rng.h"
#include "nic/dcqcn/np.h"
#include "nic/dcqcn/rate_csv.h"
#include "nic/dcqcn/rp.h"
#include "nic/paced_release.h"

namespace rocemu::dcqcn::test {

namespace {

enum class Ev : uint8_t { kSend, kRpTimer, kArrive, kDepart, kCnp, kSample };

struct Event {
  TimeNs t;
  uint64_t seq;  // FIFO among equal times: deterministic
  Ev type;
  uint32_t flow;
  uint64_t gen;  // for kSend/kRpTimer: stale if != the flow's current generation
  bool operator>(const Event& o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

class Model {
 public:
  explicit Model(const BottleneckScenario& s)
      : s_(s),
        np_(s.cfg.cnp_interval_ns),
        rng_(s.seed, "bottleneck-red"),
        np_flows_(s.flows),
        limit_bps_(s.flows, 0),
        release_ns_(s.flows, 0),
        nic_free_(s.flows, 0),
        send_gen_(s.flows, 0),
        timer_gen_(s.flows, 0),
        delivered_(s.flows, 0) {
    rps_.reserve(s.flows);
    for (uint32_t i = 0; i < s.flows; ++i) rps_.emplace_back(s_.cfg);
  }

  BottleneckResult run() {
    if (s_.rate_csv) csv_.emplace_back(*s_.rate_csv);
    if (s_.queue_csv) *s_.queue_csv << "time_ns,queue_bytes\n";
    if (s_.rate_csv || s_.queue_csv) push(0, Ev::kSample, 0, 0);
    // Flows start at line rate, staggered by one frame time so they are not in lock step.
    for (uint32_t i = 0; i < s_.flows; ++i)
      schedule_send(
          i, static_cast<TimeNs>(i) * serialization_ns(s_.frame_bytes, s_.cfg.line_rate_bps));
    while (!events_.empty()) {
      const Event e = events_.top();
      if (e.t >= s_.duration_ns) break;
      events_.pop();
      account_queue(e.t);
      switch (e.type) {
        case Ev::kSend:
          if (e.gen == send_gen_[e.flow]) on_send(e.flow, e.t);
          break;
        case Ev::kRpTimer:
          if (e.gen == timer_gen_[e.flow]) on_rp_event(e.flow, e.t, false);
          break;
        case Ev::kCnp:
          on_rp_event(e.flow, e.t, true);
          break;
        case Ev::kArrive:
          on_arrive(e.flow, e.t);
          break;
        case Ev::kDepart:
          on_depart(e.t);
          break;
        case Ev::kSample:
          on_sample(e.t);
          break;
      }
    }
    account_queue(s_.duration_ns);
    return result();
  }

 private:
  void push(TimeNs t, Ev type, uint32_t flow, uint64_t gen) {
    events_.push(Event{t, seq_++, type, flow, gen});
  }

  void schedule_send(uint32_t i, TimeNs now) {
    TimeNs t = std::max(nic_free_[i], now);
    if (nic::pacing_holds(limit_bps_[i], release_ns_[i], t)) t = release_ns_[i];
    push(t, Ev::kSend, i, ++send_gen_[i]);
  }

  void schedule_timer(uint32_t i) {
    const TimeNs d = rps_[i].next_deadline();
    ++timer_gen_[i];
    if (d != kNever) push(d, Ev::kRpTimer, i, timer_gen_[i]);
  }

  // The rate DcqcnHooks hands the host's limiter: R_C in whole bit/s, lifted at line rate.
  void apply_rate(uint32_t i) {
    limit_bps_[i] =
        nic::limiter_rate_bps(static_cast<uint64_t>(rps_[i].rate_bps()), s_.cfg.line_rate_bps);
  }

  void on_send(uint32_t i, TimeNs t) {
    rps_[i].on_timer(t);
    apply_rate(i);
    if (nic::pacing_holds(limit_bps_[i], release_ns_[i], t) || t < nic_free_[i]) {
      schedule_send(i, t);
      return;
    }
    // As RoceHost::tx: the release time at the rate in force, then the RP's byte counter
    // (DcqcnHooks::on_data_sent), whose new rate applies from the next frame on.
    release_ns_[i] = nic::paced_release_ns(release_ns_[i], t, s_.frame_bytes, limit_bps_[i]);
    rps_[i].on_bytes_sent(s_.frame_bytes, t);
    apply_rate(i);
    const TimeNs wire_ns = serialization_ns(s_.frame_bytes, s_.cfg.line_rate_bps);
    nic_free_[i] = t + wire_ns;
    push(t + wire_ns + s_.prop_ns, Ev::kArrive, i, 0);
    schedule_send(i, t);
    schedule_timer(i);
  }

  void on_rp_event(uint32_t i, TimeNs t, bool cnp) {
    if (cnp) {
      rps_[i].on_cnp(t);
    } else {
      rps_[i].on_timer(t);
    }
    apply_rate(i);
    schedule_send(i, t);
    schedule_timer(i);
  }

  void on_arrive(uint32_t i, TimeNs t) {
    fifo_.push_back(i);
    queue_bytes_ += s_.frame_bytes;
    if (!busy_) start_service(t);
  }

  void start_service(TimeNs t) {
    busy_ = true;
    push(t + serialization_ns(s_.frame_bytes, s_.bottleneck_bps), Ev::kDepart, 0, 0);
  }

  double mark_probability(uint64_t q) const {
    const auto& e = s_.ecn;
    if (q <= e.kmin_bytes) return 0.0;
    if (q > e.kmax_bytes) return 1.0;
    return e.pmax * static_cast<double>(q - e.kmin_bytes) /
           static_cast<double>(e.kmax_bytes - e.kmin_bytes);
  }

  void on_depart(TimeNs t) {
    const uint32_t i = fifo_.front();
    const bool marked = rng_.uniform() < mark_probability(queue_bytes_);
    fifo_.pop_front();
    queue_bytes_ -= s_.frame_bytes;
    busy_ = false;
    if (t >= s_.warmup_ns) delivered_[i] += s_.frame_bytes;
    if (marked) {
      ++marked_;
      const TimeNs at_np = t + s_.feedback_ns / 2;
      if (np_.on_ce_packet(np_flows_[i], at_np)) push(t + s_.feedback_ns, Ev::kCnp, i, 0);
    }
    if (!fifo_.empty()) start_service(t);
  }

  void on_sample(TimeNs t) {
    for (uint32_t i = 0; i < s_.flows && !csv_.empty(); ++i)
      csv_.front().write(sample_rp(rps_[i], i, t));
    if (s_.queue_csv) *s_.queue_csv << t << ',' << queue_bytes_ << '\n';
    push(t + s_.sample_ns, Ev::kSample, 0, 0);
  }

  void account_queue(TimeNs t) {
    const TimeNs from = std::max(last_t_, s_.warmup_ns);
    if (t > from) {
      const double dt = static_cast<double>(t - from);
      q_area_ += dt * static_cast<double>(queue_bytes_);
      if (queue_bytes_ > s_.ecn.kmax_bytes) above_kmax_ns_ += dt;
      if (queue_bytes_ == 0) empty_ns_ += dt;
    }
    if (t >= s_.warmup_ns) max_q_ = std::max(max_q_, queue_bytes_);
    last_t_ = std::max(last_t_, t);
  }

  BottleneckResult result() const {
    BottleneckResult r;
    const double window = static_cast<double>(s_.duration_ns - s_.warmup_ns);
    double sum = 0, sum_sq = 0;
    for (uint64_t b : delivered_) {
      const double bps = static_cast<double>(b) * 8.0 * kNsPerSec / window;
      r.flow_bps.push_back(bps);
      sum += bps;
      sum_sq += bps * bps;
    }
    r.utilisation = sum / static_cast<double>(s_.bottleneck_bps);
    r.jain = sum_sq > 0 ? sum * sum / (static_cast<double>(s_.flows) * sum_sq) : 0;
    r.mean_queue_bytes = q_area_ / window;
    r.max_queue_bytes = max_q_;
    r.frac_time_above_kmax = above_kmax_ns_ / window;
    r.frac_time_empty = empty_ns_ / window;
    r.marked = marked_;
    r.cnps = np_.counters().cnps_sent;
    return r;
  }

  const BottleneckScenario& s_;
  std::vector<DcqcnRp> rps_;
  Np np_;
  Rng rng_;
  std::vector<NpFlow> np_flows_;
  std::vector<uint64_t> limit_bps_;  // the host limiter's rate per sender (0: none)
  std::vector<TimeNs> release_ns_;   // its next release time (nic/paced_release.h)
  std::vector<TimeNs> nic_free_;
  std::vector<uint64_t> send_gen_, timer_gen_;
  std::vector<uint64_t> delivered_;
  std::vector<RateCsvWriter> csv_;
  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  uint64_t seq_ = 0;
  std::deque<uint32_t> fifo_;
  uint64_t queue_bytes_ = 0;
  bool busy_ = false;
  uint64_t marked_ = 0;
  TimeNs last_t_ = 0;
  double q_area_ = 0, above_kmax_ns_ = 0, empty_ns_ = 0;
  uint64_t max_q_ = 0;
};

}  // namespace

BottleneckResult run_bottleneck(const BottleneckScenario& s) { return Model(s).run(); }

}  // namespace rocemu::dcqcn::test
