// Copyright attune authors.
//
// Token-length statistics of a stream of rows in bounded memory: exact counts per distinct length
// (a dataset has at most as many distinct lengths as its longest row has tokens) and the
// loss-token share of each row in 1/1000 steps.
#ifndef ATTUNE_ENGINE_DATA_LENGTH_STATS_H_
#define ATTUNE_ENGINE_DATA_LENGTH_STATS_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace attune::data {

struct HistogramBin {
  uint64_t lo = 0, hi = 0;  // lengths in [lo, hi)
  uint64_t count = 0;
};

class LengthStats {
 public:
  void Add(uint64_t tokens, uint64_t loss_tokens);

  uint64_t Rows() const { return rows_; }
  uint64_t Tokens() const { return tokens_; }
  uint64_t LossTokens() const { return loss_tokens_; }
  // The smallest length L such that at least p (0..1) of the rows are at most L. 0 when empty.
  uint64_t Percentile(double p) const;
  // The loss-token share of rows at percentile p, in [0, 1].
  double LossSharePercentile(double p) const;

  // With one row per sequence of `seq_length` tokens: the share of all tokens cut off by
  // truncation, and the share of the sequences' slots that are padding.
  double TruncatedShare(uint64_t seq_length) const;
  double PaddingShare(uint64_t seq_length) const;
  uint64_t RowsLongerThan(uint64_t seq_length) const;

  // `bins` equal-width bins from 0 to the longest row (or to `upper` when non-zero; longer rows
  // go into the last bin).
  std::vector<HistogramBin> Histogram(int bins, uint64_t upper = 0) const;

  nlohmann::json ToJson(uint64_t seq_length) const;

 private:
  uint64_t rows_ = 0, tokens_ = 0, loss_tokens_ = 0, zero_loss_rows_ = 0;
  std::map<uint64_t, uint64_t> by_length_;
  std::vector<uint64_t> by_share_ = std::vector<uint64_t>(1001);
};

// A text histogram: one line per bin with its range, count and a bar of `width` characters.
std::string HistogramText(const std::vector<HistogramBin>& bins, int width, uint64_t seq_length);
// A self-contained SVG bar chart of the bins, with a marker at `seq_length` when non-zero.
std::string HistogramSvg(const std::vector<HistogramBin>& bins, const std::string& title,
                         uint64_t seq_length);

}  // namespace attune::data

#endif  // ATTUNE_ENGINE_DATA_LENGTH_STATS_H_
