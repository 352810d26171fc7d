#include "programs.hpp"

namespace access_patterns {

std::vector<ProgramSpec> all_programs() {
  return {stride_offset_program(), rows_columns_program(), aos_soa_program(), vector_width_index_program(),
          bank_padding_program(),  histogram_program(),    fusion_program(),  block_scan_program()};
}

}  // namespace access_patterns
