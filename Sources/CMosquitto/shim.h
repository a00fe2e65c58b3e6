#ifndef HOMEGATE_CMOSQUITTO_SHIM_H
#define HOMEGATE_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

// The MQTT module's own network loop drives libmosquitto (mosquitto_loop_read / _write / _misc)
// with epoll over the broker's socket and an eventfd; Glibc's Swift module has neither.
#include <sys/epoll.h>
#include <sys/eventfd.h>

#endif
