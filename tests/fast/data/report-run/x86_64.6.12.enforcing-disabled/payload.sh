#!/bin/sh
# probe steps of scenario enforcing-disabled
exec /harness/selinux-probe state:boot 'klog:pruned:wrote to disable. This is no longer supported' cmd:getenforce:/usr/sbin/getenforce 'cmd:advisor:/usr/local/sbin/selinux-migrate-check --summary'
