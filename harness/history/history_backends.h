// The two back ends of history_db.h's Db; open_db() chooses between them.
#pragma once

#include <memory>
#include <string>

#include "history_db.h"

namespace tracebench::history {

// A SQLite file (Debian's libsqlite3): PRAGMA application_id kApplicationId
// and user_version kSchemaVersion mark it as ours.
Status open_sqlite(const std::string& path, bool create, std::unique_ptr<Db>* out);

// A PostgreSQL database reached by a libpq connection URI: the table
// tracebench_history (application_id, schema_version) marks it as ours.
Status open_postgres(const std::string& uri, bool create, std::unique_ptr<Db>* out);

}  // namespace tracebench::history
