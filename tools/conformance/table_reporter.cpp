// SPDX-License-Identifier: MIT
// The "conformance" reporter: one line per case as it ends (PASS, FAIL or
// SKIP, the case, and why), then the totals.  Skips come from needs.cpp;
// Catch2 v2 has no skip of its own, so a skipped case is one that returned
// early, with no failed assertion, after recording its unmet needs.
#include "needs.hpp"

#define CATCH_CONFIG_EXTERNAL_INTERFACES // the reporter base classes
#include <catch2/catch.hpp>

#include <string>

namespace twinwire::conformance {
namespace {

std::string one_line(std::string text)
{
    for (char &c : text)
        if (c == '\n' || c == '\r') c = ' ';
    return text;
}

class TableReporter : public Catch::StreamingReporterBase<TableReporter> {
public:
    using StreamingReporterBase::StreamingReporterBase;
    static std::string getDescription() { return "one line per conformance case: result, case, why"; }

    void noMatchingTestCases(std::string const &spec) override
    {
        stream << "no case matches " << spec << ": nothing ran, which counts as a failure (--list-tests lists them)"
               << std::endl;
    }
    void assertionStarting(Catch::AssertionInfo const &) override {}
    bool assertionEnded(Catch::AssertionStats const &stats) override
    {
        const Catch::AssertionResult &r = stats.assertionResult;
        if (r.isOk() || !first_failure_.empty()) return true;
        std::string why = r.getSourceInfo().file;
        why = why.substr(why.find_last_of('/') + 1) + ":" + std::to_string(r.getSourceInfo().line) + ": ";
        if (r.hasExpression()) why += r.getExpressionInMacro() + " with " + r.getExpandedExpression();
        if (r.hasMessage()) why += (r.hasExpression() ? "; " : "") + r.getMessage();
        // Catch2 also copies a FAIL's own message into the info messages.
        bool own_message_seen = !r.hasMessage();
        for (const Catch::MessageInfo &info : stats.infoMessages) {
            if (!own_message_seen && info.message == r.getMessage()) {
                own_message_seen = true;
                continue;
            }
            why += "; " + info.message;
        }
        first_failure_ = one_line(why);
        return true;
    }

    void testCaseStarting(Catch::TestCaseInfo const &info) override
    {
        StreamingReporterBase::testCaseStarting(info);
        first_failure_.clear();
    }

    void testCaseEnded(Catch::TestCaseStats const &stats) override
    {
        const std::string &name = stats.testInfo.name;
        const std::string *skipped = skip_reason(name);
        const char *result;
        std::string why;
        if (stats.totals.assertions.failed > 0 || stats.totals.testCases.failed > 0) {
            result = "FAIL";
            why = first_failure_;
            failed_++;
        } else if (skipped) {
            result = "SKIP";
            why = *skipped;
            skipped_++;
        } else {
            result = "PASS";
            passed_++;
        }
        stream << result << "  " << name << (why.empty() ? "" : "\n      why: " + why) << std::endl;
        StreamingReporterBase::testCaseEnded(stats);
    }

    void testRunEnded(Catch::TestRunStats const &stats) override
    {
        stream << "\n"
               << passed_ << " passed, " << failed_ << " failed, " << skipped_ << " skipped ("
               << (passed_ + failed_ + skipped_) << " cases)" << std::endl;
        StreamingReporterBase::testRunEnded(stats);
    }

private:
    std::string first_failure_;
    unsigned passed_ = 0, failed_ = 0, skipped_ = 0;
};

CATCH_REGISTER_REPORTER("conformance", TableReporter)

} // namespace

const char kTableReporter[] = "conformance";
} // namespace twinwire::conformance
