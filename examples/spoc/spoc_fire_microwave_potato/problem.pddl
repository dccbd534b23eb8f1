(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   apple - item
   microwave - appliance
   counter_top dining_table - receptacle
 )
 (:init
              (on potato counter_top)
              (on apple counter_top)
              (hands_free)
 )
 (:goal (and 
           (hot potato)
           (on potato dining_table)
           (on apple dining_table)
           (not (microwave_on microwave))
        )
 )
)
