(define (problem basic-problem)
 (:domain basic-domain)
 (:objects
   apple - item
   counter_top dining_table - receptacle
   faucet - appliance
 )
 (:init
              (on mug counter_top)
              (on apple counter_top)
              (hands_free)
 )
 (:goal (and 
           (filled_with_water mug)
           (on mug dining_table)
           (on apple dining_table)
           (not (faucet_on faucet))
        )
 )
)
