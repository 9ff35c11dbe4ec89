// rp.cc — DCQCN reaction point (see rp.h for the rules and their sources).
#include "nic/dcqcn/rp.h"

#include <algorithm>
#include <cmath>

namespace rocemu::dcqcn {

namespace {
// make_dcqcn_config() guarantees intervals >= 1 us; a hand-built Config with 0 must not
// divide by zero or spin, so periods are taken as at least 1 ns.
TimeNs period(TimeNs ns) noexcept { return ns > 0 ? ns : 1; }
}  // namespace

DcqcnRp::DcqcnRp(const DcqcnConfig& cfg) noexcept
    : cfg_(&cfg),
      rate_bps_(static_cast<double>(cfg.line_rate_bps)),
      target_bps_(static_cast<double>(cfg.line_rate_bps)),
      alpha_(cfg.initial_alpha) {}

TimeNs DcqcnRp::next_deadline() const noexcept {
  return std::min(next_increase_ns_, next_decrease_ns_);
}

void DcqcnRp::advance(TimeNs now) noexcept {
  if (!started_) return;
  for (;;) {
    const TimeNs t = next_deadline();
    if (t > now) break;
    catch_up_alpha(t);  // alpha ticks at or before t come first (HPCC adds 1 ns for this)
    if (next_decrease_ns_ == t) {
      // A cut restarts the increase timer, so an increase due at the same instant is void.
      next_decrease_ns_ = kNever;
      cut(t);
    } else {
      next_increase_ns_ = t + period(cfg_->rate_increase_timer_ns);
      ++counters_.timer_events;
      increase(/*byte_event=*/false);
    }
  }
  catch_up_alpha(now);
}

void DcqcnRp::catch_up_alpha(TimeNs t) noexcept {
  if (t < alpha_anchor_ns_) return;
  const int64_t due = (t - alpha_anchor_ns_) / period(cfg_->alpha_interval_ns);
  int64_t n = due - alpha_ticks_done_;
  if (n <= 0) return;
  alpha_ticks_done_ = due;
  const double keep = 1.0 - cfg_->g;
  if (cfg_->alpha_update == AlphaUpdate::kPeriodic && alpha_cnp_in_slot_) {
    alpha_ = keep * alpha_ + cfg_->g;
    alpha_cnp_in_slot_ = false;
    --n;
  }
  // n ticks without a CNP: alpha (1-g)^n in closed form (n can be large after idle time).
  if (n == 1) {
    alpha_ *= keep;
  } else if (n > 1) {
    alpha_ *= std::pow(keep, static_cast<double>(n));
  }
}

void DcqcnRp::on_cnp(TimeNs now) noexcept {
  advance(now);
  ++counters_.cnps;
  const bool first = !started_;
  if (first) {
    started_ = true;
    alpha_ = cfg_->initial_alpha;
    alpha_anchor_ns_ = now;
    alpha_ticks_done_ = 0;
    decrease_anchor_ns_ = now;
    alpha_cnp_in_slot_ = false;  // the first CNP sets alpha; it does not count in a slot
  } else if (cfg_->alpha_update == AlphaUpdate::kPeriodic) {
    alpha_cnp_in_slot_ = true;
  }

  if (cfg_->rate_decrease_interval_ns <= 0) {
    cut(now);  // with the alpha from before this CNP (paper's order)
  } else if (next_decrease_ns_ == kNever) {
    const TimeNs d = cfg_->rate_decrease_interval_ns;
    next_decrease_ns_ = decrease_anchor_ns_ + ((now - decrease_anchor_ns_) / d + 1) * d;
  }
  if (cfg_->alpha_update == AlphaUpdate::kOnCnp) {
    alpha_ = (1.0 - cfg_->g) * alpha_ + cfg_->g;
    alpha_anchor_ns_ = now;  // the K timer restarts
    alpha_ticks_done_ = 0;
  }
}

void DcqcnRp::cut(TimeNs t) noexcept {
  if (cfg_->clamp_target_rate || increased_since_cut_) target_bps_ = rate_bps_;
  rate_bps_ = std::max(cfg_->min_rate_bps, rate_bps_ * (1.0 - alpha_ / 2.0));
  timer_stage_ = 0;
  byte_stage_ = 0;
  bytes_since_event_ = 0;
  increased_since_cut_ = false;
  next_increase_ns_ = t + period(cfg_->rate_increase_timer_ns);
  ++counters_.rate_cuts;
}

IncreaseStage DcqcnRp::classify() const noexcept {
  const uint32_t f = cfg_->fast_recovery_stages;
  if (cfg_->byte_counter_bytes > 0) {
    if (std::max(timer_stage_, byte_stage_) < f) return IncreaseStage::kFastRecovery;
    if (std::min(timer_stage_, byte_stage_) >= f) return IncreaseStage::kHyper;
    return IncreaseStage::kAdditive;
  }
  if (timer_stage_ < f) return IncreaseStage::kFastRecovery;
  if (timer_stage_ == f) return IncreaseStage::kAdditive;
  return IncreaseStage::kHyper;
}

void DcqcnRp::increase(bool byte_event) noexcept {
  const double line = static_cast<double>(cfg_->line_rate_bps);
  switch (classify()) {
    case IncreaseStage::kFastRecovery:
      ++counters_.fast_recovery_steps;
      break;
    case IncreaseStage::kAdditive:
      target_bps_ = std::min(line, target_bps_ + cfg_->rate_ai_bps);
      ++counters_.additive_steps;
      break;
    case IncreaseStage::kHyper:
      target_bps_ = std::min(line, target_bps_ + cfg_->rate_hai_bps);
      ++counters_.hyper_steps;
      break;
  }
  rate_bps_ = (target_bps_ + rate_bps_) / 2.0;
  // Halving never closes the gap in exact arithmetic; below 1 bit/s it is noise.
  if (target_bps_ - rate_bps_ < 1.0) rate_bps_ = target_bps_;
  if (byte_event) {
    if (byte_stage_ < UINT32_MAX) ++byte_stage_;
  } else if (timer_stage_ < UINT32_MAX) {
    ++timer_stage_;
  }
  increased_since_cut_ = true;
  if (rate_bps_ >= line && target_bps_ >= line) next_increase_ns_ = kNever;  // at line rate
}

void DcqcnRp::on_bytes_sent(uint64_t bytes, TimeNs now) noexcept {
  advance(now);
  // Counting only matters while recovering: between a cut and reaching line rate.
  if (cfg_->byte_counter_bytes == 0 || next_increase_ns_ == kNever) return;
  bytes_since_event_ += bytes;
  while (bytes_since_event_ >= cfg_->byte_counter_bytes) {
    bytes_since_event_ -= cfg_->byte_counter_bytes;
    ++counters_.byte_events;
    increase(/*byte_event=*/true);
    if (next_increase_ns_ == kNever) {
      bytes_since_event_ = 0;
      break;
    }
  }
}

}  // namespace rocemu::dcqcn
