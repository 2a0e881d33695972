/* The version chessd reports (GET /version, chessd version). */
#ifndef CHESSD_API_VERSION_H
#define CHESSD_API_VERSION_H

#define CHESSD_VERSION "0.1.0"

#endif
