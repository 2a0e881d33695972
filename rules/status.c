/* Status (in progress). */
#include "status.h"
