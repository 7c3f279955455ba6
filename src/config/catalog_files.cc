#include "config/catalog_files.h"

#include <fstream>
#include <sstream>

namespace gleaner::config {

core::Result<cost::Catalog> LoadCatalog(const std::vector<std::string>& files) {
  GLEANER_ASSIGN_OR_RETURN(cost::Catalog catalog, cost::Catalog::Parse(cost::BuiltinCatalogCsv(),
                                                                       cost::kBuiltinCatalogName));
  for (const std::string& path : files) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return core::NotFound("cannot read the catalog " + path);
    std::stringstream text;
    text << in.rdbuf();
    GLEANER_ASSIGN_OR_RETURN(cost::Catalog user, cost::Catalog::Parse(text.str(), path));
    catalog.Merge(user);
  }
  return catalog;
}

}  // namespace gleaner::config
