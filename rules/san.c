/* SAN (in progress). */
#include "san.h"
