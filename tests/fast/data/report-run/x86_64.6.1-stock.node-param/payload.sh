#!/bin/sh
# probe steps of scenario node-param
exec /harness/selinux-probe write:one:1 'klog:pruned:wrote to disable. This is no longer supported' 'klog:rejected:This is no longer supported, write rejected.' 'klog:bad:is neither reject nor accept' 'cmd:advisor:/usr/local/sbin/selinux-migrate-check --summary'
