// SPDX-License-Identifier: MIT
#include "step_runner.hpp"

#include <csignal>

namespace twinwire::bench {
namespace {

class StepDriver {
public:
    StepDriver(Runtime &rt, const StepSettings &settings, std::vector<Step> steps)
        : rt_(rt), settings_(settings), steps_(std::move(steps))
    {
    }

    void next()
    {
        if (interrupted_ || current_ >= steps_.size()) {
            rt_.stop(true);
            return;
        }
        const Step &step = steps_[current_];
        phase_ = std::make_shared<Phase>(rt_, settings_.target, settings_.connections, step.make);
        progress_ =
            std::make_unique<Progress>(rt_.loop(0), step.label, step.unit, phase_->live(), settings_.stall_timeout_s,
                                       [this](const std::string &why) { phase_->abort(why); });
        phase_->start([this] {
            progress_.reset();
            steps_[current_].collect(*phase_);
            phase_.reset();
            ++current_;
            next();
        });
    }

    void interrupt()
    {
        if (interrupted_) return;
        interrupted_ = true;
        if (phase_) phase_->abort("interrupted (SIGINT)");
    }

    bool interrupted() const { return interrupted_; }

private:
    Runtime &rt_;
    StepSettings settings_;
    std::vector<Step> steps_;
    size_t current_ = 0;
    std::shared_ptr<Phase> phase_;
    std::unique_ptr<Progress> progress_;
    bool interrupted_ = false;
};

} // namespace

bool run_steps(Runtime &rt, const StepSettings &settings, std::vector<Step> steps)
{
    StepDriver driver(rt, settings, std::move(steps));
    rt.on_signal(SIGINT, [&driver] { driver.interrupt(); });
    rt.loop(0).post([&driver] { driver.next(); });
    rt.run();
    return !driver.interrupted();
}

} // namespace twinwire::bench
